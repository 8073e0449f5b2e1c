#!/usr/bin/env bash
# Runs a command and reports the peak of the summed resident memory of its
# whole process tree (go test runs packages as parallel processes, which
# /usr/bin/time does not add up), sampled every 200 ms, on stderr.
#
#   scripts/peak-rss.sh make test
#   scripts/peak-rss.sh go test -count=1 ./model
set -uo pipefail
if [ $# -eq 0 ]; then
	echo "usage: $0 COMMAND [ARG...]" >&2
	exit 2
fi

"$@" &
root=$!

# tree_rss_kb prints the summed VmRSS (kB) of root and its descendants.
tree_rss_kb() {
	awk -v root="$root" '
		function keep() { if (pid != "") { parent[pid] = ppid; mem[pid] = rss } }
		FNR == 1 { keep(); pid = ""; ppid = ""; rss = 0 }
		/^Pid:/ { pid = $2 }
		/^PPid:/ { ppid = $2 }
		/^VmRSS:/ { rss = $2 }
		END {
			keep()
			total = 0
			for (p in mem) {
				q = p
				for (hops = 0; q != "" && q != "0" && hops < 64; hops++) {
					if (q == root) { total += mem[p]; break }
					q = parent[q]
				}
			}
			print total
		}' /proc/[0-9]*/status 2>/dev/null
}

peak=0
while kill -0 "$root" 2>/dev/null; do
	kb=$(tree_rss_kb)
	if [ "${kb:-0}" -gt "$peak" ]; then
		peak=$kb
	fi
	sleep 0.2
done
wait "$root"
rc=$?
echo "peak-rss: $((peak / 1024)) MB summed over the process tree of: $*" >&2
exit $rc
