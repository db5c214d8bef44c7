"""A tiny HTTPS admission webhook used by end-to-end tests (runs in a thread of the test process)."""
import base64
import http.server
import json
import ssl
import subprocess
import threading


def make_certs(workdir, names=("localhost",), ips=("127.0.0.1",)):
    """Creates a CA and a serving certificate with the real openssl CLI; returns (ca_pem, cert_path, key_path)."""
    d = str(workdir)
    run = lambda *a: subprocess.run(a, check=True, capture_output=True)  # noqa: E731
    run("openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
        "-keyout", f"{d}/ca.key", "-out", f"{d}/ca.crt", "-days", "2", "-subj", "/CN=test-webhook-ca")
    san = ",".join([f"DNS:{n}" for n in names] + [f"IP:{i}" for i in ips])
    run("openssl", "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
        "-keyout", f"{d}/srv.key", "-out", f"{d}/srv.csr", "-subj", "/CN=test-webhook")
    with open(f"{d}/ext.cnf", "w") as f:
        f.write(f"subjectAltName={san}\nextendedKeyUsage=serverAuth\n")
    run("openssl", "x509", "-req", "-in", f"{d}/srv.csr", "-CA", f"{d}/ca.crt", "-CAkey", f"{d}/ca.key",
        "-CAcreateserial", "-out", f"{d}/srv.crt", "-days", "2", "-extfile", f"{d}/ext.cnf")
    with open(f"{d}/ca.crt") as f:
        return f.read(), f"{d}/srv.crt", f"{d}/srv.key"


class WebhookServer:
    """Answers AdmissionReviews: adds label mutated=yes to objects and records every request."""

    def __init__(self, cert, key, port=0):
        self.requests = []
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                req = body["request"]
                outer.requests.append(req)
                resp = {"uid": req["uid"], "allowed": True}
                obj = req.get("object") or {}
                if self.path.startswith("/mutate"):
                    labels = (obj.get("metadata") or {}).get("labels")
                    ops = []
                    if labels is None:
                        ops.append({"op": "add", "path": "/metadata/labels", "value": {}})
                    ops.append({"op": "add", "path": "/metadata/labels/mutated", "value": "yes"})
                    resp["patchType"] = "JSONPatch"
                    resp["patch"] = base64.b64encode(json.dumps(ops).encode()).decode()
                    resp["warnings"] = ["mutated by the test webhook"]
                if self.path.startswith("/deny"):
                    resp = {"uid": req["uid"], "allowed": False,
                            "status": {"code": 403, "message": "no pods named deny-me"}}
                    if (obj.get("metadata") or {}).get("name") != "deny-me":
                        resp = {"uid": req["uid"], "allowed": True}
                out = json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                                  "response": resp}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler)
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(cert, key)
        self.httpd.socket = ctx.wrap_socket(self.httpd.socket, server_side=True)
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()
