"""Lab settings for a `wagtail start` project, installed as labsite/settings/local.py by
deploy/lab/wagtail.sh (the generated production.py imports it last). The server's environment
says which app this is (WAGTAIL_LAB_NAME), its own URL and the origins logins may come from."""

import os

from .base import MIDDLEWARE

_name = os.environ.get("WAGTAIL_LAB_NAME", "lab")

DEBUG = False
SECRET_KEY = f"lab-only-not-secret-{_name}"  # loopback only, throwaway data
# Both apps answer for either port: the proxy sends requests for the source URL to the target
# but keeps the source's Host header (Django compares hosts without their port).
ALLOWED_HOSTS = ["127.0.0.1", "localhost", "[::1]"]
# Django checks a POST's Origin against these; the login form posts from whichever URL the
# browser is on, the source's even when the proxy answers it from the target.
CSRF_TRUSTED_ORIGINS = [o for o in os.environ.get("WAGTAIL_LAB_ORIGINS", "").split(",") if o]
# Cookies ignore the port: without their own names, logging in to one app would log the browser
# out of the other.
SESSION_COOKIE_NAME = f"wagtail_{_name}_sessionid"
CSRF_COOKIE_NAME = f"wagtail_{_name}_csrftoken"

# WhiteNoise serves the collected (hashed, ManifestStaticFilesStorage) files from the server
# process itself, so runserver needs no --insecure and there is no second server.
MIDDLEWARE = MIDDLEWARE[:1] + ["whitenoise.middleware.WhiteNoiseMiddleware"] + MIDDLEWARE[1:]

WAGTAIL_SITE_NAME = "Lab Gazette"
WAGTAILADMIN_BASE_URL = os.environ.get("WAGTAIL_LAB_URL", "http://127.0.0.1")
# Nothing may leave loopback: no release check, no Gravatar images, no "what's new" fetches.
WAGTAIL_ENABLE_UPDATE_CHECK = False
WAGTAIL_GRAVATAR_PROVIDER_URL = None
WAGTAIL_ENABLE_WHATS_NEW_BANNER = False

# With DEBUG off Django would mail tracebacks to nobody: print them to the server log instead.
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "loggers": {"django": {"handlers": ["console"], "level": "WARNING"}},
}
