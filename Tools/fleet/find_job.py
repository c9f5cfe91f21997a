#!/usr/bin/env python3
"""A fleet scan on Spark: `listtape find --where EXPR` over many logs, run as Spark tasks.

The driver lists the logs (files, directories searched for .ltape files, or @FILE naming
one path a line), ships the `listtape` binary to the executors (SparkContext.addFile), and
each task runs `listtape find --where EXPR --json` over its share of the paths. The matches
come back as a DataFrame: log, event (the first event after which EXPR holds; 0 on the
empty list), op, event_json (that event as `listtape events --json` prints it), damaged
(why the log was read only in part), error (why it could not be read; event is null then).

    python3 Tools/fleet/find_job.py --listtape .build/release/listtape \\
        --where 'visible("draft-1.note")' recordings/            # local[*]
    spark-submit --master spark://HOST:7077 Tools/fleet/find_job.py \\
        --listtape ./listtape --where '…' --output matches @logs.txt   # a cluster

The logs must be readable at the same paths on every executor (a shared file system), and
the binary must run there: build it with `swift build -c release --static-swift-stdlib`.
docs/fleet.md shows both.
"""
import argparse
import json
import os
import stat
import subprocess
import sys

SCHEMA = ("log string, event long, op string, event_json string, damaged string, "
          "error string")


def expand(paths):
    """Files as given, directories searched recursively for .ltape files (in path order, as
    `listtape find` does), @FILE read as one path a line."""
    out = []
    for path in paths:
        if path.startswith("@"):
            with open(path[1:], encoding="utf-8") as f:
                out += [line.strip() for line in f if line.strip()]
        elif os.path.isdir(path):
            base = path.rstrip("/") + "/"
            found = []
            for root, _, names in os.walk(path):
                for name in names:
                    if name.endswith(".ltape"):
                        found.append(os.path.relpath(os.path.join(root, name), path))
            out += [base + rel for rel in sorted(found)]
        else:
            out.append(path)
    return out


def first_line(text, prefix):
    """The first line of `text` without `prefix` (how listtape words a problem)."""
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line[len(prefix):] if line.startswith(prefix) else line


def rows_of_one(path, done):
    """`listtape find --json` over one log prints its value changes (exit 0 or 1; 2 after
    the readable part of a damaged log, with a warning), or an error (nothing on stdout)."""
    if done.returncode not in (0, 1) and not (done.returncode == 2 and done.stdout.strip()):
        if done.returncode in (2, 66):
            yield (path, None, None, None, None, first_line(done.stderr, "listtape: error: "))
            return
        raise RuntimeError(f"listtape find exited {done.returncode}: {done.stderr.strip()}")
    damaged = first_line(done.stderr, "listtape: warning: ") if done.returncode == 2 else None
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    summary = lines[-1] if lines else {}
    if summary.get("initial") is True:
        yield (path, 0, None, None, damaged, None)
        return
    for change in lines[:-1]:
        if change.get("to") is True:
            recorded = change.get("recorded")
            yield (path, change["event"], change.get("op"),
                   json.dumps(recorded) if recorded is not None else None, damaged, None)
            return
    if damaged:
        yield (path, None, None, None, damaged, None)


def rows_of_many(done):
    """`listtape find --json` over several logs: one object per log that matched, was
    damaged or could not be read, then a summary; exit 0 or 1."""
    if done.returncode not in (0, 1):
        raise RuntimeError(f"listtape find exited {done.returncode}: {done.stderr.strip()}")
    for line in done.stdout.splitlines():
        obj = json.loads(line) if line.strip() else {}
        if "log" in obj and "event" not in obj:
            yield (obj["log"], None, None, None, None, obj.get("problem"))
        elif "log" in obj:
            recorded = obj.get("recorded")
            yield (obj["log"], obj.get("event"), obj.get("op"),
                   json.dumps(recorded) if recorded is not None else None,
                   obj.get("problem"), None)


def scan(binary_name, expression):
    """The task: run the shipped binary over this partition's logs."""
    def run(partition):
        from pyspark import SparkFiles
        paths = list(partition)
        if not paths:
            return
        binary = SparkFiles.get(binary_name)
        mode = os.stat(binary).st_mode
        if not mode & stat.S_IXUSR:
            os.chmod(binary, mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
        command = [binary, "find", "--where", expression, "--json", "--"] + paths
        done = subprocess.run(command, capture_output=True, text=True,
                              env=dict(os.environ, NO_COLOR="1"))
        if len(paths) == 1:
            yield from rows_of_one(paths[0], done)
        else:
            yield from rows_of_many(done)
    return run


def find(spark, logs, expression, listtape, partitions=None):
    """The DataFrame of matches (and unreadable logs) of EXPR over `logs`."""
    spark.sparkContext.addFile(listtape)
    name = os.path.basename(listtape)
    count = partitions or max(1, min(len(logs), spark.sparkContext.defaultParallelism * 4))
    rdd = spark.sparkContext.parallelize(logs, count).mapPartitions(scan(name, expression))
    return spark.createDataFrame(rdd, SCHEMA)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--where", required=True, help="the state expression")
    parser.add_argument("--listtape", required=True, help="the listtape binary to ship")
    parser.add_argument("--master", help="Spark master (default: spark-submit's, or local[*])")
    parser.add_argument("--partitions", type=int, help="tasks (default: 4 per core)")
    parser.add_argument("--output", help="also write the matches as Parquet into this directory")
    parser.add_argument("logs", nargs="+", help="logs, directories of .ltape files, @FILE")
    args = parser.parse_args()
    from pyspark.sql import SparkSession
    builder = SparkSession.builder.appName("listtape-find")
    if args.master:
        builder = builder.master(args.master)
    spark = (builder.config("spark.ui.enabled", "false")
             .config("spark.sql.session.timeZone", "UTC").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    logs = expand(args.logs)
    matches = find(spark, logs, args.where, os.path.abspath(args.listtape), args.partitions)
    rows = matches.orderBy("log").collect()
    if args.output:
        matches.write.mode("error").parquet(args.output)
    for row in rows:
        print(json.dumps(row.asDict(), sort_keys=True))
    matched = sum(1 for r in rows if r.event is not None)
    print(f"{matched} of {len(logs)} logs match", file=sys.stderr)
    spark.stop()
    return 0 if matched else 1


if __name__ == "__main__":
    sys.exit(main())
