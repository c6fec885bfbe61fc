"""A replayed document's clock and randomness, made the same on every replay.

Pages that read the clock or draw random numbers (carousels, "5 minutes ago", A/B switches,
ids made at run time) differ between replays however faithfully their bytes are served. As
Chromium's Web Page Replay does, a replayed HTML document gets, before any script of its own,
a script that

- starts `Date`, `new Date()` and `Date.now()` at the time the document was recorded, advancing
  in real time from there (by `performance.now()`), with `performance.timeOrigin` moved alike;
- draws `Math.random()`, `crypto.getRandomValues()` and `crypto.randomUUID()` from a PRNG
  (mulberry32) seeded by the episode's seed and the recorded load, so a page's draws repeat.

The script removes its own element once it has run: the document a replay leaves is the one
recorded. Not covered: workers, `Intl.DateTimeFormat().format()` without a date, and the time
stamps of events and animation frames (which count from the page's start, and so repeat
nearly anyway).
"""

from __future__ import annotations

import hashlib
import re
from datetime import datetime

from mitmproxy import http

from proxy import classify, csp
from proxy.episode import Episode
from proxy.page_shift import page_nonce

# One line, no `</script`, no markup: safe inside an HTML <script> element.
SCRIPT = (
    "(()=>{"
    "const recorded=__RECORDED__;"
    "if(recorded!==null){"
    "const RealDate=Date,perf=performance,started=perf.now();"
    "const current=()=>Math.floor(recorded+perf.now()-started);"
    "const FixedDate=function Date(...args){"
    "if(!new.target)return new RealDate(current()).toString();"
    "return Reflect.construct(RealDate,args.length?args:[current()],"
    "new.target===FixedDate?RealDate:new.target);};"
    "FixedDate.prototype=RealDate.prototype;"
    'Object.defineProperty(FixedDate,"length",{value:7});'
    "FixedDate.now=function now(){return current();};"
    "FixedDate.parse=RealDate.parse;FixedDate.UTC=RealDate.UTC;"
    'Object.defineProperty(RealDate.prototype,"constructor",'
    "{value:FixedDate,writable:true,configurable:true});"
    "globalThis.Date=FixedDate;"
    'Object.defineProperty(perf,"timeOrigin",{get:()=>recorded-started,configurable:true});'
    "}"
    # mulberry32: 32 bits of state, one multiply-xorshift round per draw.
    "const generator=state=>()=>{state=(state+0x6d2b79f5)|0;"
    "let t=Math.imul(state^(state>>>15),1|state);"
    "t=(t+Math.imul(t^(t>>>7),61|t))^t;return(t^(t>>>14))>>>0;};"
    "const draw=generator(__SEED__),bytes=generator(__SEED__^0x9e3779b9);"
    "Math.random=function random(){return draw()/4294967296;};"
    'if(typeof Crypto==="function"){'
    "const real=Crypto.prototype.getRandomValues;"
    "Crypto.prototype.getRandomValues=function getRandomValues(array){"
    # The browser's own call checks the argument (an integer array of at most 65,536 bytes).
    "real.call(this,array);"
    "const out=new Uint8Array(array.buffer,array.byteOffset,array.byteLength);"
    "for(let i=0;i<out.length;i+=4){let word=bytes();"
    "for(let j=i;j<i+4&&j<out.length;j++){out[j]=word&255;word>>>=8;}}"
    "return array;};"
    "if(Crypto.prototype.randomUUID){"
    "Crypto.prototype.randomUUID=function randomUUID(){"
    "const b=this.getRandomValues(new Uint8Array(16));b[6]=(b[6]&15)|64;b[8]=(b[8]&63)|128;"
    'const h=Array.from(b,x=>x.toString(16).padStart(2,"0")).join("");'
    'return h.slice(0,8)+"-"+h.slice(8,12)+"-"+h.slice(12,16)+"-"+h.slice(16,20)+"-"+h.slice(20);'
    "};}}"
    "document.currentScript&&document.currentScript.remove();"
    "})();"
)

_HEAD = re.compile(rb"<head\b[^>]*>", re.IGNORECASE)
_HTML = re.compile(rb"<html\b[^>]*>", re.IGNORECASE)
_DOCTYPE = re.compile(rb"<!doctype\b[^>]*>", re.IGNORECASE)
_SCRIPT = re.compile(rb"<script\b", re.IGNORECASE)
# <meta charset=...> or <meta http-equiv=content-type content="...; charset=...">
_CHARSET = re.compile(rb"<meta\b[^>]*charset[^>]*>", re.IGNORECASE)


def recorded_ms(started: str | None) -> int | None:
    """A HAR entry's `startedDateTime` as epoch milliseconds (None when it does not parse)."""
    if not started:
        return None
    try:
        return int(datetime.fromisoformat(started).timestamp() * 1000)
    except (TypeError, ValueError):
        return None


def random_seed(episode_seed: int, load: int) -> int:
    """The PRNG's 32-bit seed for one recorded load of an episode."""
    digest = hashlib.sha256(f"replay:{episode_seed}:{load}".encode()).digest()
    return int.from_bytes(digest[:4], "big")


def script_for(recorded: int | None, seed: int) -> str:
    return SCRIPT.replace("__RECORDED__", "null" if recorded is None else str(recorded)).replace(
        "__SEED__", str(seed)
    )


def before_page_scripts(document: bytes, tag: bytes) -> bytes:
    """The document with `tag` where it runs before any script of the page: at the start of
    <head> (after a <meta> that declares the charset, which must stay near the top), else of
    <html>, else after the DOCTYPE; before the first <script> in any case."""
    first_script = _SCRIPT.search(document)
    limit = first_script.start() if first_script else len(document)
    at = 0
    for opening in (_HEAD, _HTML, _DOCTYPE):
        found = opening.search(document, 0, limit)
        if found:
            at = found.end()
            break
    charset = _CHARSET.search(document, at, limit)
    if charset:
        at = charset.end()
    return document[:at] + tag + document[at:]


def takes_script(flow: http.HTTPFlow, response: http.Response) -> bool:
    """A document (a navigation or a frame's) of HTML whose bytes the replay may insert into:
    not XHTML (the script is no well-formed XML), not still content-encoded, not UTF-16/32."""
    kind = classify.request_kind(flow.request)
    if kind not in (classify.RequestKind.DOCUMENT, classify.RequestKind.FRAME):
        return False
    mime = response.headers.get("content-type", "").split(";")[0].strip().lower()
    if mime != "text/html" or "content-encoding" in response.headers:
        return False
    body = response.raw_content or b""
    charset = classify.charset(response) or ""
    wide = "16" in charset or "32" in charset
    return bool(body) and not wide and not body.startswith((b"\xff\xfe", b"\xfe\xff"))


def make_deterministic(
    flow: http.HTTPFlow, response: http.Response, episode: Episode, recorded: int | None, load: int
) -> None:
    """Put the deterministic clock and randomness before the page's scripts, with the nonce a
    Content-Security-Policy of the page asks for (the page's own, else one added to it)."""
    if not takes_script(flow, response):
        return
    body = response.raw_content or b""
    url = flow.request.pretty_url
    policies = response.headers.get_all("content-security-policy")
    nonce = page_nonce(episode, policies, body, url)
    attribute = f' nonce="{nonce}"' if nonce else ""
    tag = f"<script{attribute}>{script_for(recorded, random_seed(episode.seed, load))}</script>"
    body = before_page_scripts(body, tag.encode())
    if nonce:
        body = csp.add_nonce_to_meta(body, nonce)
        if policies:
            response.headers.set_all(
                "content-security-policy", [csp.add_nonce_to_header(p, nonce) for p in policies]
            )
    response.content = body
