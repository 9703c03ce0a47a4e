"""Run every benchmark, print a table of ratios and write benchmarks/results/results.json.

Usage: python -m benchmarks.run_all [--quick] [--fresh-reference] | --training

Every ratio compares two timings taken in this run, on this machine:
absolute times differ between machines, ratios much less.  --quick skips
the n_hidden = 25 cases; --fresh-reference recomputes the float64 reference
values of log Z at n_hidden = 25 (about five minutes each) instead of reading
them from results/reference.json; --training reruns only the training grid
(bench_training, about 80 CPU seconds) and replaces its entry in results.json.
"""

import datetime
import json
import sys

from benchmarks import bench_cd_expected, bench_training
from benchmarks.bench_exact import N_VISIBLE
from benchmarks.common import RESULTS, fmt_time, machine, run_isolated

SCALES = (0.01, 1.0)


def training_rows(training):
    """Table rows of the training grid: each cell's CPU-time ratios to scikit-learn."""
    rows = []
    for cell in training["cells"]:
        what = (f"CD-1 / PCD-1, {cell['data']}, {cell['n_visible']} x {cell['n_hidden']}, "
                f"batch {cell['batch_size']}")
        r = cell["ratio_cpu"]
        rows.append((what, f"sklearn {cell['cpu_seconds']['sklearn']['median']:.2f} s CPU",
                     f"{r['cd1']['median']:.2f} / {r['pcd1']['median']:.2f} x sklearn "
                     f"[{min(r['cd1']['min'], r['pcd1']['min']):.2f}, "
                     f"{max(r['cd1']['max'], r['pcd1']['max']):.2f}]", "reported"))
    return rows


def training_only():
    """Rerun only the training grid; replace its entry in results/results.json."""
    path = RESULTS / "results.json"
    results = json.loads(path.read_text()) if path.exists() else {}
    results["training"] = bench_training.run()
    RESULTS.mkdir(exist_ok=True)
    path.write_text(json.dumps(results, indent=1, sort_keys=True) + "\n")
    for what, time, ratio, _ in training_rows(results["training"]):
        print(f"{what:<48}  {time:<20}  {ratio}")
    print(f"written: {path}")


def main(quick=False, fresh_reference=False):
    results = {"date": datetime.date.today().isoformat(), "machine": machine(), "exact": {},
               "curve": {}}
    rows = []

    # The compiled-loop limit: log Z's inner loop alone, compiled, on one block and one core
    # (bench_compiled_loops), times the entries of an enumeration, shared by all cores.
    study = run_isolated("bench_compiled_loops")
    results["compiled_loops"] = study
    cores = results["machine"]["cores"]

    def loop_limit(n_hidden):
        return study["log_z_loop_ns"]["median"] * 1e-9 * 2**n_hidden * N_VISIBLE / cores

    results["compiled_limit"] = {"ns_per_entry_one_core": study["log_z_loop_ns"]["median"],
                                 "cores": cores,
                                 "seconds": {n: loop_limit(n) for n in (20, 25, 30)}}

    for scale in SCALES:
        limit = run_isolated("bench_exact", "limit", 20, scale, 3)
        log_z = run_isolated("bench_exact", "log_partition", 20, scale, 3)
        grad = run_isolated("bench_exact", "gradient", 20, scale, 7)
        stable = run_isolated("bench_exact", "log_partition_stable", 20, scale, 3)
        results["exact"][f"784x20 scale {scale}"] = {"limit": limit, "log_partition": log_z,
                                                    "gradient": grad, "stable": stable}
        rows.append((f"log Z, 784 x 20, scale {scale}", fmt_time(log_z["time"]),
                     f"{log_z['time']['median'] / limit['time']['median']:.2f} x textbook", "<= 1.5"))
        rows.append((f"log Z, stable path only, 784 x 20, scale {scale}",
                     fmt_time(stable["time"]),
                     f"{stable['time']['median'] / limit['time']['median']:.2f} x textbook", "<= 1.5"))
        ratio = grad["time"]["ratio_to_log_partition"]
        rows.append((f"gradient, 784 x 20, scale {scale}", fmt_time(grad["time"]),
                     f"{ratio['median']:.2f} x log Z [{ratio['min']:.2f}, {ratio['max']:.2f}]"
                     " (timed in turn)", "no target: see README"))

        # The same with the compiled loops (engine="numba"), against the compiled-loop limit.
        log_z_c = run_isolated("bench_exact", "log_partition", 20, scale, 3, "numba")
        grad_c = run_isolated("bench_exact", "gradient", 20, scale, 7, "numba")
        results["exact"][f"784x20 scale {scale}"].update(
            {"log_partition_numba": log_z_c, "gradient_numba": grad_c})
        rows.append((f"log Z, 784 x 20, scale {scale}, compiled", fmt_time(log_z_c["time"]),
                     f"{log_z_c['time']['median'] / loop_limit(20):.2f} x compiled-loop limit; "
                     f"{log_z_c['time']['median'] / limit['time']['median']:.2f} x textbook",
                     "<= 2 x limit"))
        rows.append((f"gradient, 784 x 20, scale {scale}, compiled", fmt_time(grad_c["time"]),
                     f"{grad_c['time']['median'] / loop_limit(20):.2f} x compiled-loop limit; "
                     f"{grad_c['time']['ratio_to_log_partition']['median']:.2f} x log Z",
                     "reported"))

    # What the gradient's extra work costs against log Z's with each inner loop compiled.
    rows.append(("gradient / log Z, inner loops compiled, one block",
                 f"{study['log_z_loop_ns']['median']:.2f} ns/entry (log Z loop)",
                 f"{study['compiled_gradient_over_log_z']:.2f} x log Z (numpy passes: "
                 f"{study['numpy_gradient_over_log_z']:.2f} x); division "
                 f"{study['division_over_log_z_loop']:.2f} x log Z loop", "study"))

    # The enumeration's segments as tasks of a Dask cluster (the `executor` argument).
    ex = run_isolated("bench_executor")
    results["executor"] = ex
    local = ex["time"]["local, 1 thread"]["median"]
    for name in ("local, 2 threads", "Dask, 1 worker", "Dask, 2 workers"):
        ratio = ex["ratio_to_local_1_thread"][name]
        rows.append((f"log Z, 784 x {ex['n_hidden']}, {name}", fmt_time(ex["time"][name]),
                     f"{ratio['median']:.2f} x local 1 thread ({local:.1f} s) "
                     f"[{ratio['min']:.2f}, {ratio['max']:.2f}]; same bits: "
                     f"{'yes' if ex['identical'] else 'NO'}", "study: 2 cores"))

    if not quick:
        # The float64 reference takes about five minutes per model: its values are kept in
        # results/reference.json and recomputed only with --fresh-reference (or when missing).
        ref_file = RESULTS / "reference.json"
        references = json.loads(ref_file.read_text()) if ref_file.exists() else {}
        for scale in SCALES:
            key = f"784x25 scale {scale}"
            ours = run_isolated("bench_exact", "log_partition", 25, scale, 1)
            if fresh_reference or key not in references:
                ref = run_isolated("bench_exact", "reference", 25, scale, 1)
                references[key] = {"value": ref["value"], "seconds": ref["time"]["median"],
                                   "date": results["date"],
                                   "how": "benchmarks.bench_exact.reference_log_partition"}
            reference = references[key]
            rel = abs(ours["value"] - reference["value"]) / abs(reference["value"])
            compiled = run_isolated("bench_exact", "log_partition", 25, scale, 1, "numba")
            rel_c = abs(compiled["value"] - reference["value"]) / abs(reference["value"])
            results["exact"][key] = {"log_partition": ours, "reference": reference,
                                     "relative_difference": rel, "log_partition_numba": compiled,
                                     "relative_difference_numba": rel_c}
            rows.append((f"log Z, 784 x 25, scale {scale}", fmt_time(ours["time"]),
                         f"rel. diff {rel:.1e} to the float64 reference; "
                         f"peak {ours['peak_rss_mib']:.0f} MiB", "< 45 s, 1e-10, < 500 MiB"))
            rows.append((f"log Z, 784 x 25, scale {scale}, compiled", fmt_time(compiled["time"]),
                         f"{compiled['time']['median'] / loop_limit(25):.2f} x compiled-loop "
                         f"limit; rel. diff {rel_c:.1e}; peak {compiled['peak_rss_mib']:.0f} MiB",
                         "<= 2 x limit, 1e-10, < 500 MiB"))
        ref_file.write_text(json.dumps(references, indent=1, sort_keys=True) + "\n")

        # The gradient at 784 x 25 and log Z at 784 x 30 (a billion hidden states), compiled.
        grad25 = run_isolated("bench_exact", "gradient", 25, 1.0, 1, "numba")
        log_z30 = run_isolated("bench_exact", "log_partition", 30, 1.0, 1, "numba")
        results["exact"]["784x25 scale 1.0"]["gradient_numba"] = grad25
        results["exact"]["784x30 scale 1.0"] = {"log_partition_numba": log_z30}
        rows.append(("gradient, 784 x 25, scale 1.0, compiled", fmt_time(grad25["time"]),
                     f"{grad25['time']['median'] / loop_limit(25):.2f} x compiled-loop limit; "
                     f"peak {grad25['peak_rss_mib']:.0f} MiB", "reported"))
        rows.append(("log Z, 784 x 30, scale 1.0, compiled", fmt_time(log_z30["time"]),
                     f"{log_z30['time']['median'] / loop_limit(30):.2f} x compiled-loop limit; "
                     f"peak {log_z30['peak_rss_mib']:.0f} MiB", "reported"))

    top = 24 if quick else 25
    for n_hidden in range(12, top + 1):
        entry = {"log_partition": run_isolated("bench_exact", "log_partition", n_hidden, 1.0, 1),
                 "log_partition_numba": run_isolated("bench_exact", "log_partition", n_hidden,
                                                     1.0, 1, "numba"),
                 "compiled_limit": loop_limit(n_hidden)}
        if n_hidden <= 20:
            entry["limit"] = run_isolated("bench_exact", "limit", n_hidden, 1.0, 1)
        results["curve"][n_hidden] = entry

    training = bench_training.run()
    results["training"] = training
    rows.extend(training_rows(training))

    cd = bench_cd_expected.run(3)
    results["cd_expected"] = cd
    rows.append(("exact CD-k gradient, k = 1..50, 3x3 BAS, 16 hidden",
                 fmt_time(cd["cd_expected_k1_to_50"]),
                 f"{cd['cd_expected_k1_to_50']['median'] / cd['baseline_matmul']['median']:.2f}"
                 " x its matrix product", "< 5 s"))

    results["table"] = [dict(zip(("what", "time", "ratio", "target"), r)) for r in rows]
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "results.json").write_text(json.dumps(results, indent=1, sort_keys=True) + "\n")
    width = max(len(r[0]) for r in rows)
    print(f"{'what':<{width}}  {'median [min, max]':<28}  ratio (target)")
    for what, time, ratio, target in rows:
        print(f"{what:<{width}}  {time:<28}  {ratio} ({target})")
    print(f"written: {RESULTS / 'results.json'}")


if __name__ == "__main__":
    if "--training" in sys.argv[1:]:
        training_only()
        sys.exit()
    main(quick="--quick" in sys.argv[1:], fresh_reference="--fresh-reference" in sys.argv[1:])
