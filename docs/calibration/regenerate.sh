#!/usr/bin/env bash
# Regenerates every figure and chart of docs/calibration.md: the seed lab's
# calibrations at 60 and 1,000 clients, then, with no refit, predictions of
# five other storms from the 1,000-client fit. Each calibration holds the
# measurement lock, waits for the machine to be quiet before each real run
# and replaces (up to 20 times) runs that other work disturbed; the load of
# every run is in its table and calibration.json. The charts are copied
# next to this file.
#
#   docs/calibration/regenerate.sh [OUT]      # OUT defaults to out/calibration
#
# About 10 minutes on a quiet 2-core machine, more when runs wait for quiet
# or are replaced. Needs PostgreSQL ($DATABASE_URL, loopback) and the go
# tool.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-out/calibration}
img=docs/calibration
mkdir -p "$out" bin
go build -o bin/stormsim ./cmd/stormsim
go build -o bin/gateway ./cmd/gateway

calibrate() { # NAME ARGS...
	local name=$1
	shift
	echo "== $name: load before $(cut -d' ' -f1-3 /proc/loadavg)"
	# Exit 1 (an agreement or a check failed) is a result to report, not an error here.
	flock /tmp/stormsim-measure.lock bin/stormsim calibrate --gateway-bin bin/gateway --runs 5 --replace 20 --wait-quiet 5m \
		-o "$out/$name" "$@" >"$out/$name.txt" || [ $? -eq 1 ]
	echo "   load after $(cut -d' ' -f1-3 /proc/loadavg)"
	tail -n 3 "$out/$name.txt" | head -n 1
}
lab1000=configs/seed-lab-1000.yaml
calibrate lab-60 -c configs/seed-lab.yaml
calibrate lab-1000 -c $lab1000
model="$out/lab-1000/calibrated-run-*.yaml" # quoted: calibrate expands it
calibrate predict-bucket -c $lab1000 --model "$model" --set 'admission={kind: token_bucket, rate: 333.333, burst: 334, retry_after: 1s}'
calibrate predict-decorrelated -c $lab1000 --model "$model" \
	--set 'policies[0]={name: decorrelated, base: 100ms, cap: 3200ms, min_delay_after_reject: 200ms}'
calibrate predict-500 -c $lab1000 --model "$model" --set clients=500
calibrate predict-2000 -c $lab1000 --model "$model" --set clients=2000
calibrate predict-4000 -c $lab1000 --model "$model" --set clients=4000 --max-clients 4000

# The drain lab, three ways, and the rolling-deploy lab (docs/deploys.md),
# predicted from the same fit with nothing fitted on them.
drainlab=configs/drain-lab.yaml
calibrate drain-all -c $drainlab --model "$model"
calibrate drain-spread -c $drainlab --model "$model" --set 'drain.pace={kind: spread, over: 5s}'
calibrate drain-reserved -c $drainlab --model "$model" --set 'drain.reconnect_hint={kind: reserved}'
calibrate deploy-lab -c configs/deploy-lab.yaml --model "$model"

for name in lab-60 lab-1000 predict-bucket predict-decorrelated predict-500 predict-2000; do
	for chart in band-attempts band-accepts connected; do
		cp "$out/$name/charts/$chart.png" "$img/$name-$chart.png"
	done
done
for name in drain-all drain-spread drain-reserved; do
	cp "$out/$name/charts/band-drain.attempts.png" "$img/$name-band-attempts.png"
done
cp "$out/deploy-lab/charts/band-deploy.attempts.png" "$img/deploy-lab-band-attempts.png"
echo "tables in $out/*.txt, charts copied to $img/"
