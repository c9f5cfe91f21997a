#!/usr/bin/env python3
"""What an engine counts in the tables `listtape export --parquet -o DIR` wrote.

    count.py ENGINE DIR        ENGINE: pyarrow, duckdb, chdb or spark

Prints one JSON object: per log, the sessions row and what the events table adds up to,
and every fault row. The tests (Tests/ListTapeCLITests/ExportParquetTests.swift) compare
it with `listtape stats --json` and `listtape find --faults --json` on the same logs, so
each engine is asked the same questions in its own language.
"""
import json
import sys

SESSION_COLUMNS = ["log", "events", "faults", "marks", "first_ms", "last_ms", "bytes",
                   "format", "damaged"]


def result(sessions, kinds, per_log, faults, row_groups):
    """sessions: rows of SESSION_COLUMNS; kinds: {log: {kind: n}} from the faults_* columns;
    per_log: rows (log, rows, faults, marks, first_ms, last_ms, ids, max_event) of events;
    faults: rows (log, event, op, fault, reason)."""
    out = {"sessions": {}, "events": {}, "faults": sorted([list(f) for f in faults])}
    for row in sessions:
        s = dict(zip(SESSION_COLUMNS, row))
        s["faultsByKind"] = {k: n for k, n in sorted(kinds.get(s["log"], {}).items()) if n}
        s["damaged"] = bool(s["damaged"])
        out["sessions"][s.pop("log")] = s
    for log, rows, nfaults, marks, first, last, ids, max_event in per_log:
        out["events"][log] = {"rows": rows, "faults": nfaults, "marks": marks,
                              "first_ms": first, "last_ms": last, "ids": ids,
                              "max_event": max_event}
    out["row_groups"] = row_groups
    return out


def kind_columns(names):
    return [n for n in names if n.startswith("faults_")]


def with_pyarrow(d):
    import pyarrow.compute as pc
    import pyarrow.parquet as pq
    s = pq.read_table(f"{d}/sessions.parquet")
    e = pq.read_table(f"{d}/events.parquet")
    ms = lambda col: pc.cast(col, "int64")
    sessions = zip(*[s[c].to_pylist() for c in ["log", "events", "faults", "marks"]],
                   ms(s["first_time"]).to_pylist(), ms(s["last_time"]).to_pylist(),
                   *[s[c].to_pylist() for c in ["bytes", "format", "damaged"]])
    kinds = {}
    for i, log in enumerate(s["log"].to_pylist()):
        kinds[log] = {c[7:]: s[c][i].as_py() for c in kind_columns(s.column_names)}
    e = e.append_column("is_fault", pc.cast(pc.is_valid(e["fault"]), "int64"))
    e = e.append_column("is_mark", pc.cast(pc.equal(e["op"], "mark"), "int64"))
    e = e.append_column("t", ms(e["time"]))
    e = e.append_column("n_ids", pc.list_value_length(e["ids"]))
    g = e.group_by("log").aggregate([
        ("event", "count"), ("is_fault", "sum"), ("is_mark", "sum"), ("t", "min"),
        ("t", "max"), ("n_ids", "sum"), ("event", "max")])
    per_log = zip(g["log"].to_pylist(), g["event_count"].to_pylist(),
                  g["is_fault_sum"].to_pylist(), g["is_mark_sum"].to_pylist(),
                  g["t_min"].to_pylist(), g["t_max"].to_pylist(), g["n_ids_sum"].to_pylist(),
                  g["event_max"].to_pylist())
    f = e.filter(pc.is_valid(e["fault"]))
    faults = zip(*[f[c].to_pylist() for c in ["log", "event", "op", "fault", "reason"]])
    groups = pq.ParquetFile(f"{d}/events.parquet").metadata.num_row_groups
    return result(sessions, kinds, per_log, faults, groups)


SESSIONS_SQL = """select log, events, faults, marks, {ms}(first_time), {ms}(last_time), bytes,
  format, damaged from {table} order by log"""
EVENTS_SQL = """select log, count(*), count(fault), sum(case when op = 'mark' then 1 else 0 end),
  min({ms}(time)), max({ms}(time)), sum({length}(ids)), max(event) from {table} group by log"""
FAULTS_SQL = "select log, event, op, fault, reason from {table} where fault is not null"


def with_sql(query, events, sessions, ms, length, columns):
    names = columns(sessions)
    kinds = {}
    cols = kind_columns(names)
    for row in query(f"select log, {', '.join(cols)} from {sessions}"):
        kinds[row[0]] = {c[7:]: n for c, n in zip(cols, row[1:])}
    return (query(SESSIONS_SQL.format(ms=ms, table=sessions)), kinds,
            query(EVENTS_SQL.format(ms=ms, length=length, table=events)),
            query(FAULTS_SQL.format(table=events)))


def with_duckdb(d):
    import duckdb
    con = duckdb.connect()
    query = lambda sql: con.execute(sql).fetchall()
    events, sessions = f"'{d}/events.parquet'", f"'{d}/sessions.parquet'"
    columns = lambda t: [r[0] for r in query(f"describe select * from {t}")]
    parts = with_sql(query, events, sessions, "epoch_ms", "len", columns)
    groups = query(f"select count(distinct row_group_id) from parquet_metadata({events})")[0][0]
    return result(*parts, groups)


def with_chdb(d):
    import chdb
    def query(sql):
        text = chdb.query(sql, "JSONCompact").bytes().decode()
        return [tuple(r) for r in json.loads(text)["data"]] if text.strip() else []
    events = f"file('{d}/events.parquet', Parquet)"
    sessions = f"file('{d}/sessions.parquet', Parquet)"
    columns = lambda t: [r[0] for r in query(f"describe table {t}")]
    parts = list(with_sql(query, events, sessions, "toUnixTimestamp64Milli", "length", columns))
    # ClickHouse's JSON gives 64-bit integers as strings and booleans as true/false.
    parts[0] = [tuple(int(v) if isinstance(v, str) and v.lstrip("-").isdigit() and i else v
                      for i, v in enumerate(r)) for r in parts[0]]
    parts[1] = {log: {k: int(n) for k, n in ks.items()} for log, ks in parts[1].items()}
    parts[2] = [tuple(int(v) if isinstance(v, str) and i else v for i, v in enumerate(r))
                for r in parts[2]]
    parts[3] = [(r[0], int(r[1]), r[2], r[3], r[4]) for r in parts[3]]
    return result(*parts, None)


def with_spark(d):
    from pyspark.sql import SparkSession
    spark = (SparkSession.builder.master("local[1]").appName("listtape-count")
             .config("spark.ui.enabled", "false").config("spark.sql.session.timeZone", "UTC")
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    spark.read.parquet(f"{d}/events.parquet").createOrReplaceTempView("events")
    spark.read.parquet(f"{d}/sessions.parquet").createOrReplaceTempView("sessions")
    query = lambda sql: [tuple(r) for r in spark.sql(sql).collect()]
    columns = lambda t: spark.table(t).columns
    parts = with_sql(query, "events", "sessions", "unix_millis", "size", columns)
    out = result(*parts, None)
    spark.stop()
    return out


ENGINES = {"pyarrow": with_pyarrow, "duckdb": with_duckdb, "chdb": with_chdb,
           "spark": with_spark}

if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ENGINES:
        sys.exit(f"usage: {sys.argv[0]} {'|'.join(ENGINES)} DIR")
    print(json.dumps(ENGINES[sys.argv[1]](sys.argv[2]), sort_keys=True))
