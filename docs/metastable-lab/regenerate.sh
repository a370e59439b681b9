#!/usr/bin/env bash
# Regenerates the figures and charts of docs/metastable-lab.md: the three
# metastable-lab storms, 3 real runs each, each sized to the machine by a
# warm-up (4 handshake timeouts of claims at the measured claim rate; the
# bucket at 0.8 of it), predicted from a fit of
# seed-lab-1000 (the shipped calibrate/testdata/seed-lab-1000 files, or
# MODEL='out/lab-1000/calibrated-run-*.yaml' after calibrating it on this
# machine). Each calibration holds the measurement lock; the load of every
# run is in its table and calibration.json. The goodput charts are copied
# next to this file.
#
#   docs/metastable-lab/regenerate.sh [OUT]   # OUT defaults to out/metastable-lab
#
# About 8 minutes on a 2-core machine. Needs PostgreSQL ($DATABASE_URL,
# loopback) and the go tool.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-out/metastable-lab}
img=docs/metastable-lab
model=${MODEL:-calibrate/testdata/seed-lab-1000/calibrated-run-*.yaml}
mkdir -p "$out" bin
go build -o bin/stormsim ./cmd/stormsim
go build -o bin/gateway ./cmd/gateway
for storm in serve skip bucket; do
	config=configs/metastable-lab-$storm.yaml
	[ $storm = serve ] && config=configs/metastable-lab.yaml
	size=(--size-queue 4)
	[ $storm = bucket ] && size+=(--size-bucket 0.8)
	echo "== $storm: load before $(cut -d' ' -f1-3 /proc/loadavg)"
	# Exit 1 (an agreement or a check failed) is a result to report, not an error here.
	# --max-clients: on a quick machine 4 timeouts of claims are 3,400 clients
	# and more, past calibrate's default of 2,000 (as TestMetastableLabForReal allows).
	flock /tmp/stormsim-measure.lock bin/stormsim calibrate --gateway-bin bin/gateway --runs 3 --replace 5 --wait-quiet 2m --max-clients 8000 \
		"${size[@]}" --model "$model" -c "$config" -o "$out/$storm" >"$out/$storm.txt" || [ $? -eq 1 ]
	echo "   load after $(cut -d' ' -f1-3 /proc/loadavg)"
	cp "$out/$storm/charts/goodput.png" "$img/$storm-goodput.png"
done
