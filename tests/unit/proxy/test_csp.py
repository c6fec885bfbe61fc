from proxy import csp


def test_nonce_added_to_strict_dynamic_policy() -> None:
    policy = "script-src 'nonce-abc' 'strict-dynamic'; object-src 'none'"
    assert csp.existing_nonce([policy]) == "abc"
    out = csp.add_nonce(policy, "abc")
    assert out == policy  # the page's own nonce is reused: nothing to add


def test_nonce_goes_to_the_governing_directive_only() -> None:
    policy = "default-src 'self'; style-src 'self'"
    out = csp.add_nonce(policy, "n1")
    assert out == "default-src 'self' 'nonce-n1'; style-src 'self' 'nonce-n1'"
    elem = csp.add_nonce("script-src 'self'; script-src-elem 'self'", "n1")
    assert elem == "script-src 'self'; script-src-elem 'self' 'nonce-n1'"


def test_unsafe_inline_without_nonce_is_left_alone() -> None:
    # Adding a nonce here would make browsers ignore 'unsafe-inline' and break the page.
    policy = "script-src 'self' 'unsafe-inline'; style-src 'unsafe-inline'"
    assert not csp.restricts([policy])
    assert csp.add_nonce(policy, "n1") == policy


def test_none_is_replaced_by_the_nonce_alone() -> None:
    assert csp.add_nonce("script-src 'none'", "n1") == "script-src 'nonce-n1'"


def test_no_script_or_style_directive_means_no_restriction() -> None:
    assert not csp.restricts(["img-src 'self'; frame-ancestors 'none'"])
    assert csp.add_nonce("img-src 'self'", "n1") == "img-src 'self'"


def test_several_policies_in_one_header() -> None:
    out = csp.add_nonce_to_header("script-src 'self', default-src 'none'", "n")
    assert out == "script-src 'self' 'nonce-n', default-src 'nonce-n'"


def test_meta_policy_is_found_and_extended() -> None:
    body = (
        b'<head><meta http-equiv="Content-Security-Policy" '
        b"content=\"script-src 'self'\"><title>x</title></head>"
    )
    assert csp.meta_policies(body) == ["script-src 'self'"]
    out = csp.add_nonce_to_meta(body, "n9")
    assert b'content="script-src &#x27;self&#x27; &#x27;nonce-n9&#x27;"' in out
    assert out.endswith(b"<title>x</title></head>")
    assert csp.meta_policies(out) == ["script-src 'self' 'nonce-n9'"]
