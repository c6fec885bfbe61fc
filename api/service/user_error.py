"""The one error of the command line a user can fix."""


class UserError(Exception):
    """Something the user can fix (a wrong argument, a file that is no JSON, a service without
    the listener asked for): told in one line, exit status 2."""
