# tests/real_server_client.py - a bounded load generator for memcached on
# 127.0.0.1, run by tests/real_server.sh.  CONNS connections in parallel
# each send BATCHES x REQS rounds of set, get, get of a missing key and
# incr, every response kept; between batches, with a server pid given, it
# sends the dump signal and waits until that dump's wait.folded file is
# there (MUTEXSTAT_FORMAT=text,folded: the text file is whole before the
# folded files are opened).  Then it prints what must not depend on
# the library: a digest of each connection's responses and the server's
# counters that the requests decide, and asks the server to shut down.
# Usage: real_server_client.py PORT PID SIGNAL DUMP_PREFIX [CONNS BATCHES REQS]
import hashlib
import os
import signal
import socket
import sys
import threading
import time

port, pid, signame, prefix = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
conns, batches, reqs = (int(a) for a in (sys.argv[5:8] or (4, 3, 400)))
# Every wait below is bounded, each from its own start: one deadline for
# the whole run counted the requests' time too, which a loaded machine
# (ASan, a second test beside this one) can stretch towards it.
WAIT = 20


class Conn:
    def __init__(self):
        deadline = time.monotonic() + WAIT
        while True:
            try:
                self.sock = socket.create_connection(("127.0.0.1", port), timeout=20)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
        self.buf = b""
        self.log = hashlib.sha256()

    def line(self):
        while b"\r\n" not in self.buf:
            data = self.sock.recv(65536)
            if not data:
                raise EOFError("server closed the connection")
            self.buf += data
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def ask(self, request, multi=False):
        """Send one request; return its response (up to END if multi)."""
        self.sock.sendall(request)
        lines = [self.line()]
        while multi and lines[-1] != b"END":
            lines.append(self.line())
        response = b"\n".join(lines)
        self.log.update(response + b"\n")
        return response


def work(c, conn, batch):
    for i in range(reqs):
        key = b"k%d-%d-%d" % (c, batch, i)
        value = hashlib.md5(key).hexdigest().encode() * (1 + i % 4)
        conn.ask(b"set %s %d 0 %d\r\n%s\r\n" % (key, i % 7, len(value), value))
        conn.ask(b"get %s\r\n" % key, multi=True)
        conn.ask(b"get missing-%s\r\n" % key, multi=True)
        conn.ask(b"incr counter-%d 1\r\n" % c)


def wait_dump(n):
    path = "%s.%d.wait.folded" % (prefix, n)
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        if os.path.exists(path):
            return
        time.sleep(0.02)
    sys.exit("dump %d never completed (%s)" % (n, path))


clients = [Conn() for _ in range(conns)]
for c, conn in enumerate(clients):
    conn.ask(b"set counter-%d 0 0 1\r\n0\r\n" % c)
for batch in range(batches):
    threads = [threading.Thread(target=work, args=(c, conn, batch))
               for c, conn in enumerate(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if pid:
        os.kill(pid, getattr(signal, "SIG" + signame))
        wait_dump(batch + 1)

for c, conn in enumerate(clients):
    print("connection %d: %d requests, responses %s" %
          (c, 1 + batches * reqs * 4, conn.log.hexdigest()))
    print("counter-%d = %s" % (c, conn.ask(b"get counter-%d\r\n" % c, multi=True)
                               .split(b"\n")[1].decode()))
stats = dict(line.split()[1:3] for line in
             clients[0].ask(b"stats\r\n", multi=True).decode().split("\n")[:-1])
for name in ("cmd_get", "cmd_set", "get_hits", "get_misses", "incr_hits",
             "incr_misses", "curr_items", "total_items", "evictions"):
    print("%s %s" % (name, stats[name]))
clients[0].sock.sendall(b"shutdown\r\n")
for conn in clients:
    conn.sock.close()
