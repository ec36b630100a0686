"""Cross-site request refusal for the UI's state-changing forms (sign in, sign out).

Without it another site could post a form to /ui/login with a key of its choosing and sign a visitor's browser
into that project (login CSRF), or sign them out. A browser says where a form post comes from: `Origin` on every
cross-origin POST (`null` from a sandboxed frame or a no-referrer page), `Sec-Fetch-Site`, and usually `Referer`.
A post is accepted when what the browser says names this host, or when it says nothing at all (a tool such as
curl, which carries no visitor's cookies); any other origin, `null` included, is refused with 403.
"""

from __future__ import annotations

import urllib.parse

from fastapi import HTTPException, Request

_DEFAULT_PORTS = {"http": "80", "https": "443"}


def _host_port(netloc: str, scheme: str) -> str | None:
    """`host:port` with the scheme's default port written out (so `x` and `x:80` compare equal); None if invalid."""
    parts = urllib.parse.urlsplit(f"//{netloc}")
    try:
        port = parts.port
    except ValueError:
        return None
    return f"{parts.hostname}:{port or _DEFAULT_PORTS[scheme]}" if parts.hostname else None


def _origin_host(origin: str) -> str | None:
    """The `host:port` an Origin or Referer names, or None when it names no host (`null`, garbage)."""
    parts = urllib.parse.urlsplit(origin.strip())
    if parts.scheme not in _DEFAULT_PORTS or not parts.netloc:
        return None
    return _host_port(parts.netloc, parts.scheme)


def refuse_cross_site(request: Request) -> None:
    """Raise 403 unless the request comes from a page of this host (or from no page at all)."""
    # The host the browser reached: `Host`, or the one a reverse proxy says it forwarded (a page of another site
    # can set neither header on a form post). Behind a TLS-terminating proxy the browser's origin is https while
    # this hop is http: hosts are compared with either scheme's default port.
    hosts = [request.headers.get("host", ""), *request.headers.get("x-forwarded-host", "").split(",")]
    here = {_host_port(host.strip(), scheme) for host in hosts if host.strip() for scheme in _DEFAULT_PORTS} - {None}
    fetch_site = request.headers.get("sec-fetch-site")
    if fetch_site is not None and fetch_site not in ("same-origin", "none"):
        raise _refused(f"the form was posted from another site (Sec-Fetch-Site: {fetch_site})")
    origin = request.headers.get("origin")
    if origin is not None:
        if _origin_host(origin) not in here:
            raise _refused(f"the form was posted from another origin ({origin[:100]})")
        return
    referer = request.headers.get("referer")
    if referer is not None and _origin_host(referer) not in here:
        raise _refused("the form was posted from a page of another site")


def _refused(why: str) -> HTTPException:
    return HTTPException(403, f"{why}: sign in from this collector's own /ui/login page")
