#!/usr/bin/env python3
"""Loopback HTTP server for qcheck's remote tests (tests/test_remote.cpp).

Serves model folders in the Hugging Face Hub layout and as plain folders, with range requests,
and can misbehave on purpose. It binds 127.0.0.1 on an ephemeral port, prints the port on the
first line of stdout, and stops when its standard input closes (the test that started it ended)
or after --lifetime seconds, whichever comes first.

URL layout, where MODE is one of the modes below and OWNER/NAME is a repository whose OWNER was
mounted with --mount OWNER=DIR (the repository is DIR/NAME):

  /MODE/api/models/OWNER/NAME/tree/REV          the hub's tree API (paged by --page-size)
  /MODE/OWNER/NAME/resolve/REV/FILE             a file; *.safetensors redirect to /cdn/... on
                                                the host "localhost" (another host, as the
                                                hub's CDN is)
  /MODE/files/OWNER/NAME/FILE                   the same files as a plain folder
  /_stats                                       counters as JSON (not counted themselves)
  /_reset                                       zero the counters

Modes:
  hub        well-behaved
  norange    ignores Range and sends whole files (slowly enough to notice an early stop)
  flaky      answers 429 (Retry-After: 1) to the first request for each file, then serves it
  busy       answers 503 (no Retry-After) to the first two requests for each file
  drop       for *.safetensors: the first request for each file promises the range, sends half
             of it and closes the connection; later requests are served
  dropshard  like drop, but always, for files whose name contains "00002"
"""

import argparse
import hashlib
import json
import os
import re
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MODES = {"hub", "norange", "flaky", "busy", "drop", "dropshard"}


class Counters:
    def __init__(self):
        self.lock = threading.Lock()
        self.reset()

    def reset(self):
        with getattr(self, "lock", threading.Lock()):
            self.requests = 0
            self.bytes_sent = 0
            self.by_kind = {}
            self.seen = {}  # (mode, path) -> requests so far, for the misbehaving modes
            self.auth_hub = 0  # hub requests that carried the expected token
            self.auth_cdn = 0  # CDN requests that carried any Authorization header
            self.paths = []
            self.retry_gaps = []  # seconds between a 429 and the next request for that file
            self.last_429 = {}

    def snapshot(self):
        with self.lock:
            return {
                "requests": self.requests,
                "bytes_sent": self.bytes_sent,
                "by_kind": dict(self.by_kind),
                "auth_hub": self.auth_hub,
                "auth_cdn": self.auth_cdn,
                "paths": list(self.paths),
                "retry_gaps": list(self.retry_gaps),
            }


class CountingWriter:
    """Wraps the socket's write side and counts every byte handed to the kernel."""

    def __init__(self, raw, counters):
        self.raw = raw
        self.counters = counters
        self.counting = True

    def write(self, data):
        n = self.raw.write(data)
        if self.counting:
            with self.counters.lock:
                self.counters.bytes_sent += len(data)
        return n

    def flush(self):
        self.raw.flush()

    def close(self):
        self.raw.close()

    @property
    def closed(self):
        return self.raw.closed


def commit_of(directory):
    return hashlib.sha1(os.path.realpath(directory).encode()).hexdigest()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go in separate writes
    server_version = "qcheck-test"
    sys_version = ""

    def setup(self):
        super().setup()
        self.wfile = CountingWriter(self.wfile, self.server.counters)

    def log_message(self, format, *args):
        pass

    # Small bodies for errors, so that byte counts stay meaningful.
    def send_plain(self, status, text, extra=None):
        body = text.encode()
        self.send_response(status)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        for key, value in (extra or {}).items():
            self.send_header(key, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def do_HEAD(self):
        self.handle_any()

    def do_GET(self):
        self.handle_any()

    def handle_any(self):
        url = urllib.parse.urlsplit(self.path)
        path = urllib.parse.unquote(url.path)
        counters = self.server.counters
        if path in ("/_stats", "/_reset"):
            self.wfile.counting = False
            if path == "/_reset":
                counters.reset()
            body = json.dumps(counters.snapshot()).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        with counters.lock:
            counters.requests += 1
            counters.paths.append(self.command + " " + url.path)
        parts = path.split("/")[1:]
        if len(parts) < 2:
            return self.send_plain(404, "not found")
        if parts[0] == "cdn":
            # /cdn/MODE/OWNER/NAME/FILE?sig=...
            with counters.lock:
                if self.headers.get("Authorization") is not None:
                    counters.auth_cdn += 1
            if len(parts) < 5:
                return self.send_plain(404, "not found")
            return self.serve_file(parts[1], parts[2], parts[3], "/".join(parts[4:]), "cdn", None)
        mode = parts[0]
        if mode not in MODES:
            return self.send_plain(404, "unknown mode")
        rest = parts[1:]
        token = self.server.token
        if token and self.headers.get("Authorization") == "Bearer " + token:
            with counters.lock:
                counters.auth_hub += 1
        if rest[:2] == ["api", "models"] and len(rest) >= 6 and rest[4] == "tree":
            return self.serve_tree(mode, rest[2], rest[3], "/".join(rest[5:]), url.query)
        if rest[0] == "files" and len(rest) >= 4:
            return self.serve_file(mode, rest[1], rest[2], "/".join(rest[3:]), "files", None)
        if len(rest) >= 5 and rest[2] == "resolve":
            owner, name, revision = rest[0], rest[1], rest[3]
            file = "/".join(rest[4:])
            directory = self.repo_dir(owner, name)
            if directory is None:
                return self.send_plain(
                    404, "repository not found", {"X-Error-Code": "RepoNotFound"})
            if revision == "no-such-revision":
                return self.send_plain(
                    404, "revision not found", {"X-Error-Code": "RevisionNotFound"})
            commit = commit_of(directory)
            if file.endswith(".safetensors") and os.path.isfile(os.path.join(directory, file)):
                with counters.lock:
                    counters.by_kind["redirect"] = counters.by_kind.get("redirect", 0) + 1
                host = self.headers.get("Host", "")
                port = host.rsplit(":", 1)[-1]
                target = "http://localhost:%s/cdn/%s/%s/%s/%s?sig=%s" % (
                    port, mode, owner, name, urllib.parse.quote(file), commit[:8])
                self.send_response(302)
                self.send_header("Location", target)
                self.send_header("X-Repo-Commit", commit)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            return self.serve_file(mode, owner, name, file, "resolve", commit)
        return self.send_plain(404, "not found")

    def repo_dir(self, owner, name):
        base = self.server.mounts.get(owner)
        if base is None or name in ("", ".", "..") or "/" in name:
            return None
        directory = os.path.join(base, name)
        return directory if os.path.isdir(directory) else None

    def serve_tree(self, mode, owner, name, revision, query):
        directory = self.repo_dir(owner, name)
        if directory is None:
            return self.send_plain(404, "repository not found", {"X-Error-Code": "RepoNotFound"})
        if revision == "no-such-revision":
            return self.send_plain(
                404, "revision not found", {"X-Error-Code": "RevisionNotFound"})
        entries = []
        for entry in sorted(os.listdir(directory)):
            full = os.path.join(directory, entry)
            if os.path.isdir(full):
                entries.append({"type": "directory", "oid": "0" * 40, "size": 0, "path": entry})
            elif os.path.isfile(full):
                size = os.path.getsize(full)
                item = {"type": "file", "oid": "1" * 40, "size": size, "path": entry}
                if entry.endswith(".safetensors"):
                    item["lfs"] = {"oid": "2" * 64, "size": size, "pointerSize": 134}
                entries.append(item)
        cursor = int(urllib.parse.parse_qs(query).get("cursor", ["0"])[0])
        page = entries[cursor:cursor + self.server.page_size]
        body = json.dumps(page).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        if cursor + self.server.page_size < len(entries):
            host = self.headers.get("Host", "")
            link = "http://%s/%s/api/models/%s/%s/tree/%s?cursor=%d" % (
                host, mode, owner, name, urllib.parse.quote(revision, safe=""),
                cursor + self.server.page_size)
            self.send_header("Link", '<%s>; rel="next"' % link)
        self.end_headers()
        self.wfile.write(body)
        with self.server.counters.lock:
            kinds = self.server.counters.by_kind
            kinds["tree"] = kinds.get("tree", 0) + 1

    def serve_file(self, mode, owner, name, file, kind, commit):
        counters = self.server.counters
        directory = self.repo_dir(owner, name)
        extra = {"X-Repo-Commit": commit} if commit else {}
        if directory is None:
            return self.send_plain(404, "repository not found", {"X-Error-Code": "RepoNotFound"})
        full = os.path.normpath(os.path.join(directory, file))
        if not full.startswith(os.path.realpath(directory) + os.sep) and \
                not full.startswith(directory + os.sep):
            return self.send_plain(404, "not found")
        if not os.path.isfile(full):
            extra["X-Error-Code"] = "EntryNotFound"
            return self.send_plain(404, "entry not found", extra)
        with counters.lock:
            counters.by_kind[kind] = counters.by_kind.get(kind, 0) + 1
            key = (mode, full)
            seen = counters.seen.get(key, 0)
            counters.seen[key] = seen + 1
            if mode == "flaky" and key in counters.last_429:
                counters.retry_gaps.append(time.monotonic() - counters.last_429.pop(key))
        if mode == "flaky" and seen == 0:
            with counters.lock:
                counters.last_429[key] = time.monotonic()
            return self.send_plain(429, "slow down", {"Retry-After": "1"})
        if mode == "busy" and seen < 2:
            return self.send_plain(503, "busy")
        size = os.path.getsize(full)
        begin, end = 0, size  # [begin, end)
        status = 200
        wanted = self.headers.get("Range")
        if wanted and mode != "norange":
            match = re.fullmatch(r"bytes=(\d*)-(\d*)", wanted.strip())
            if not match or (match.group(1) == "" and match.group(2) == ""):
                return self.send_plain(400, "bad range")
            if match.group(1) == "":
                begin, end = max(0, size - int(match.group(2))), size
            else:
                begin = int(match.group(1))
                end = size if match.group(2) == "" else min(size, int(match.group(2)) + 1)
            if begin >= size or begin >= end:
                return self.send_plain(416, "range not satisfiable",
                                       dict(extra, **{"Content-Range": "bytes */%d" % size}))
            status = 206
        self.send_response(status)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Accept-Ranges", "none" if mode == "norange" else "bytes")
        self.send_header("Content-Length", str(end - begin))
        if status == 206:
            self.send_header("Content-Range", "bytes %d-%d/%d" % (begin, end - 1, size))
        for key, value in extra.items():
            self.send_header(key, value)
        self.end_headers()
        if self.command == "HEAD":
            return
        drop = file.endswith(".safetensors") and (
            (mode == "drop" and seen == 0) or (mode == "dropshard" and "00002" in file))
        with open(full, "rb") as f:
            f.seek(begin)
            if drop:
                self.wfile.write(f.read(max(1, (end - begin) // 2)))
                self.wfile.flush()
                self.close_connection = True
                self.connection.shutdown(2)
                return
            remaining = end - begin
            chunk = 16384 if mode == "norange" else 1 << 20
            try:
                while remaining > 0:
                    data = f.read(min(chunk, remaining))
                    if not data:
                        break
                    self.wfile.write(data)
                    remaining -= len(data)
                    if mode == "norange":
                        # Let the client read and hang up, as on a real link.
                        self.wfile.flush()
                        time.sleep(0.002)
            except (BrokenPipeError, ConnectionResetError):
                self.close_connection = True


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mount", action="append", default=[], metavar="OWNER=DIR")
    parser.add_argument("--token", default="", help="the token the hub expects (counted only)")
    parser.add_argument("--page-size", type=int, default=50)
    parser.add_argument("--lifetime", type=float, default=900.0)
    args = parser.parse_args()

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    server.counters = Counters()
    server.token = args.token
    server.page_size = max(1, args.page_size)
    server.mounts = {}
    for mount in args.mount:
        owner, _, directory = mount.partition("=")
        server.mounts[owner] = os.path.abspath(directory)

    def watch_stdin():
        try:
            sys.stdin.read()
        finally:
            server.shutdown()

    threading.Thread(target=watch_stdin, daemon=True).start()
    timer = threading.Timer(args.lifetime, server.shutdown)
    timer.daemon = True
    timer.start()
    print(server.server_address[1], flush=True)
    server.serve_forever(poll_interval=0.2)
    server.server_close()


if __name__ == "__main__":
    main()
