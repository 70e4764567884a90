#!/usr/bin/env bash
# gen.sh regenerates the test audio of package asr with espeak-ng and sox:
# 16 kHz mono PCM16 WAVs and boundaries.json, the speech boundaries the VAD
# tests check against. The generated files are committed, so tests never
# need espeak-ng or sox; run this only to change them:
#   apt-get install -y espeak-ng sox && asr/testdata/gen.sh
set -euo pipefail
cd "$(dirname "$0")"
command -v espeak-ng >/dev/null && command -v sox >/dev/null ||
	{ echo "gen.sh: needs espeak-ng and sox (apt-get install -y espeak-ng sox)" >&2; exit 1; }

rate=16000
lead_ms=800    # silence before the first utterance
gap_ms=1500    # silence between utterances
tail_ms=1000   # silence after the last one
bed=0.003      # white-noise bed under the questions (about -55 dBFS RMS)

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fmt=(-r "$rate" -c 1 -b 16 -e signed-integer)

samples() { soxi -s "$1"; }
ms_of() { echo $(( $1 * 1000 / rate )); }
secs() { awk "BEGIN{print $1/1000}"; }

# speak VOICE OUT TEXT: one utterance, resampled, with leading and
# trailing silence trimmed (below 0.3 % of full scale), so its first and last
# samples are speech.
speak() {
	espeak-ng -v "$1" -s 150 -w "$tmp/raw.wav" "$3"
	sox "$tmp/raw.wav" "${fmt[@]}" "$2" silence 1 0.01 0.3% reverse silence 1 0.01 0.3% reverse
}

# questions NAME VOICE TEXT...: the utterances separated by known silences
# over a quiet noise bed; appends the clip's entry to boundaries.json.
questions() {
	local name=$1 voice=$2; shift 2
	local parts=() pos=$(( lead_ms * rate / 1000 )) i=0 utts=""
	sox -n "${fmt[@]}" "$tmp/lead.wav" trim 0 "$(secs "$lead_ms")"
	parts+=("$tmp/lead.wav")
	sox -n "${fmt[@]}" "$tmp/gap.wav" trim 0 "$(secs "$gap_ms")"
	sox -n "${fmt[@]}" "$tmp/tail.wav" trim 0 "$(secs "$tail_ms")"
	for text in "$@"; do
		speak "$voice" "$tmp/u$i.wav" "$text"
		local n; n=$(samples "$tmp/u$i.wav")
		[ -n "$utts" ] && utts+=","
		utts+=$(printf '\n      {"start_ms": %d, "end_ms": %d, "text": "%s"}' "$(ms_of "$pos")" "$(ms_of $(( pos + n )))" "$text")
		pos=$(( pos + n ))
		parts+=("$tmp/u$i.wav")
		if [ $(( i + 1 )) -lt $# ]; then parts+=("$tmp/gap.wav"); pos=$(( pos + gap_ms * rate / 1000 )); fi
		i=$(( i + 1 ))
	done
	parts+=("$tmp/tail.wav")
	sox "${parts[@]}" "$tmp/speech.wav"
	local total; total=$(samples "$tmp/speech.wav")
	sox -n "${fmt[@]}" "$tmp/bed.wav" synth "${total}s" whitenoise vol "$bed"
	sox -m -v 1 "$tmp/speech.wav" -v 1 "$tmp/bed.wav" "${fmt[@]}" "$name.wav"
	entries+=("$(printf '  {\n    "file": "%s.wav",\n    "utterances": [%s\n    ]\n  }' "$name" "$utts")")
}

entries=()
questions en_questions en-us \
	"What is your greatest weakness" \
	"Tell me about a time you handled a conflict at work" \
	"Why do you want to join our team"
questions zh_questions cmn \
	"请介绍一下你自己" \
	"你为什么想加入我们公司" \
	"你最大的缺点是什么"

# noise_only: 4 s of steady low white noise (about -45 dBFS RMS); no speech.
sox -n "${fmt[@]}" noise_only.wav synth 4 whitenoise vol 0.01
# silence_only: 4 s of digital silence.
sox -n "${fmt[@]}" silence_only.wav trim 0 4

{
	echo "["
	for i in "${!entries[@]}"; do
		[ "$i" -gt 0 ] && echo ","
		printf '%s' "${entries[$i]}"
	done
	printf '\n]\n'
} > boundaries.json
echo "gen.sh: wrote $(ls ./*.wav | tr '\n' ' ')and boundaries.json"
