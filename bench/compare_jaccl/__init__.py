"""bench/compare-jaccl's parts (records, report, cluster, runs); see bench/README.md."""
