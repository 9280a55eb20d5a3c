#!/usr/bin/env python3
"""A plain HTTP load client for /retrieve (issue 43 item 4): N threads in a closed loop over the CMRC questions.

    python3 bench/load_client.py --url http://127.0.0.1:3000 --server-pid PID --questions FILE
                                 [--threads 16] [--seconds 8] [--legs vector] [--connection new|reuse]

Prints one JSON object: answers, answers/s, p50/p99 ms, and the CPU per answer, read from /proc, of the server with
every process under it and of this client (utime + stime of this process, every thread), over the measured window
(after a 1 s warm-up). `--connection new` opens a TCP connection per request, as `requests.get` does without a
Session; `reuse` keeps one keep-alive connection per thread. Standard library only.
"""
import argparse
import http.client
import json
import os
import threading
import time
import urllib.parse

HZ = os.sysconf("SC_CLK_TCK")


def cpu_ms(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(") ", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) * 1000 / HZ
    except OSError:
        return 0.0


def tree(root):
    children = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                ppid = int(f.read().rsplit(") ", 1)[1].split()[1])
        except OSError:
            continue
        children.setdefault(ppid, []).append(int(entry))
    pids = [root]
    for pid in pids:
        pids.extend(children.get(pid, []))
    return pids


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--url", required=True)
    p.add_argument("--server-pid", type=int, required=True)
    p.add_argument("--questions", required=True, help="a JSON array of question strings")
    p.add_argument("--threads", type=int, default=16)
    p.add_argument("--seconds", type=float, default=8)
    p.add_argument("--legs", default="")
    p.add_argument("--connection", choices=["new", "reuse"], default="new")
    args = p.parse_args()

    with open(args.questions, encoding="utf-8") as f:
        questions = json.load(f)
    url = urllib.parse.urlsplit(args.url)
    state = {"next": 0, "measuring": False}
    lock = threading.Lock()
    latencies, errors = [], [0]

    def path_of(q):
        params = {"mode": "hybrid", "q": q, "top_k": "10"}
        if args.legs:
            params["legs"] = args.legs
        return "/retrieve?" + urllib.parse.urlencode(params)

    def worker(until):
        conn = None
        while time.monotonic() < until:
            with lock:
                q = questions[state["next"] % len(questions)]
                state["next"] += 1
            started = time.monotonic()
            try:
                if conn is None:
                    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=60)
                conn.request("GET", path_of(q))
                response = conn.getresponse()
                response.read()
                ok = response.status == 200
            except (OSError, http.client.HTTPException):
                ok = False
                conn = None
            if args.connection == "new" and conn is not None:
                conn.close()
                conn = None
            elapsed = (time.monotonic() - started) * 1000
            with lock:
                if state["measuring"]:
                    if ok:
                        latencies.append(elapsed)
                    else:
                        errors[0] += 1
        if conn is not None:
            conn.close()

    start = time.monotonic()
    measure_from = start + 1.0
    until = measure_from + args.seconds
    threads = [threading.Thread(target=worker, args=(until,)) for _ in range(args.threads)]
    for t in threads:
        t.start()
    time.sleep(max(0.0, measure_from - time.monotonic()))
    pids = tree(args.server_pid)
    server_before = sum(cpu_ms(pid) for pid in pids)
    client_before = cpu_ms(os.getpid())
    with lock:
        state["measuring"] = True
    window_start = time.monotonic()
    for t in threads:
        t.join()
    window = time.monotonic() - window_start
    server_ms = sum(cpu_ms(pid) for pid in pids) - server_before
    client_ms = cpu_ms(os.getpid()) - client_before
    latencies.sort()
    n = len(latencies)

    def quantile(q):
        return round(latencies[min(n - 1, int(q * n))], 2) if n else None

    print(json.dumps({
        "client": f"python {args.threads} threads, connection {args.connection}",
        "answers": n, "errors": errors[0], "answers_per_s": round(n / window, 1), "p50_ms": quantile(0.5), "p99_ms": quantile(0.99),
        "server_cpu_ms_per_answer": round(server_ms / n, 2) if n else None,
        "client_cpu_ms_per_answer": round(client_ms / n, 2) if n else None,
        "load_average": [round(x, 2) for x in os.getloadavg()],
    }))


if __name__ == "__main__":
    main()
