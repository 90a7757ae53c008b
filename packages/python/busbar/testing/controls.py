"""The broker's controls over its admin port: entities created through the Service Bus
administration API (ATOM/XML), and Busbar's test controls (`/$busbar/…`: purge, reset, the
virtual clock, faults), each request signed with a SAS token for the namespace key."""

import base64
import hashlib
import hmac
import json
import time
import urllib.error
import urllib.parse
import urllib.request
from xml.sax.saxutils import escape

KEY_NAME = "RootManageSharedAccessKey"
KEY = "SAS_KEY_VALUE"

_ATOM = (
    '<entry xmlns="http://www.w3.org/2005/Atom"><content type="application/xml">'
    '<{kind} xmlns="http://schemas.microsoft.com/netservices/2010/10/servicebus/connect">'
    "{properties}</{kind}></content></entry>"
)


class ControlError(RuntimeError):
    """The broker refused a control request (its status and answer are in the message)."""


def _text(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    return escape(str(value))


class Controls:
    """Requests to one broker's admin port (`http://127.0.0.1:PORT`)."""

    def __init__(self, endpoint):
        self.endpoint = endpoint

    def _token(self, url):
        audience = urllib.parse.quote_plus(url)
        expiry = str(int(time.time()) + 3600)
        digest = hmac.new(KEY.encode(), f"{audience}\n{expiry}".encode(), hashlib.sha256).digest()
        signature = urllib.parse.quote_plus(base64.b64encode(digest))
        return f"SharedAccessSignature sr={audience}&sig={signature}&se={expiry}&skn={KEY_NAME}"

    def request(self, method, path, body=None, content_type="application/json"):
        """Sends one request; returns the answer's body, raising `ControlError` unless 2xx."""
        url = self.endpoint + path
        headers = {"Authorization": self._token(url)}
        if body is not None:
            headers["Content-Type"] = content_type
        request = urllib.request.Request(url, data=body, method=method, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=30) as answer:
                return answer.read()
        except urllib.error.HTTPError as error:
            raise ControlError(f"{method} {path}: {error.code} {error.read().decode()}") from None

    def _json(self, method, path, document=None):
        body = None if document is None else json.dumps(document).encode()
        return json.loads(self.request(method, path, body) or b"{}")

    def put_entity(self, path, kind, properties):
        """Creates a queue, topic or subscription with Service Bus property names
        (`RequiresSession=True`, `LockDuration="PT30S"`, …)."""
        elements = "".join(f"<{name}>{_text(value)}</{name}>" for name, value in properties.items())
        body = _ATOM.format(kind=kind, properties=elements).encode()
        self.request("PUT", "/" + urllib.parse.quote(path), body, "application/atom+xml")

    def purge(self, entity, dead_letter=False):
        query = "?deadLetter=true" if dead_letter else ""
        return self._json("POST", f"/$busbar/purge/{urllib.parse.quote(entity)}{query}")["purged"]

    def reset(self):
        self._json("POST", "/$busbar/reset")

    def advance_clock(self, duration):
        by = urllib.parse.quote(duration)
        return self._json("POST", f"/$busbar/clock/advance?by={by}")

    def fault(self, entity, document):
        self._json("POST", f"/$busbar/faults/{urllib.parse.quote(entity)}", document)
