# tests/real_python.py - a threaded workload for Debian's python3, run by
# tests/real_python.sh with and without the library.  Eight workers take
# items from a bounded queue.Queue, hash them, add to a total under a
# threading.Lock and hand results back through a second queue; a
# threading.Condition and a Barrier make them meet.  Threads switch the
# GIL all the time, and CPython's GIL is a pthread mutex with a condition
# variable (threading.Lock itself is a POSIX semaphore on Linux).  The
# printed line depends only on the work, never on the scheduling.
import hashlib
import queue
import threading

WORKERS = 8
ITEMS = 40000

jobs = queue.Queue(maxsize=64)
results = queue.Queue()
total_lock = threading.Lock()
total = 0
ready = threading.Condition()
started = 0
barrier = threading.Barrier(WORKERS)


def worker():
    global total, started
    with ready:
        started += 1
        ready.notify_all()
    barrier.wait()
    while True:
        item = jobs.get()
        if item is None:
            jobs.task_done()
            return
        digest = hashlib.sha256(b"%d" % item).hexdigest()
        with total_lock:
            total += item
        results.put((item, digest[:8]))
        jobs.task_done()


threads = [threading.Thread(target=worker) for _ in range(WORKERS)]
for t in threads:
    t.start()
with ready:
    ready.wait_for(lambda: started == WORKERS)
for i in range(ITEMS):
    jobs.put(i)
for _ in threads:
    jobs.put(None)
jobs.join()
for t in threads:
    t.join()
out = sorted(results.get() for _ in range(results.qsize()))
print(len(out), total, hashlib.sha256(repr(out).encode()).hexdigest())
