package main

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// cpuMark is a moment's CPU counters: the machine's (from /proc/stat) and
// this process's (the load generator's).
type cpuMark struct {
	at          time.Time
	busy, total float64 // machine jiffies; zero where /proc/stat is missing
	perCPU      []jiffies
	self        time.Duration
}

// jiffies are one CPU's busy and total time, from /proc/stat.
type jiffies struct{ busy, total float64 }

func markCPU() cpuMark {
	m := cpuMark{at: time.Now()}
	if raw, err := os.ReadFile("/proc/stat"); err == nil {
		for i, line := range strings.Split(string(raw), "\n") {
			if !strings.HasPrefix(line, "cpu") {
				break // the cpu lines come first
			}
			j := parseJiffies(line)
			if i == 0 {
				m.busy, m.total = j.busy, j.total
			} else {
				m.perCPU = append(m.perCPU, j)
			}
		}
	}
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		m.self = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	return m
}

// parseJiffies reads "cpu[N] user nice system idle iowait irq softirq steal ...".
func parseJiffies(line string) jiffies {
	var j jiffies
	fields := strings.Fields(line)
	for i, f := range fields[1:] {
		v, _ := strconv.ParseFloat(f, 64)
		j.total += v
		if i != 3 && i != 4 { // idle, iowait
			j.busy += v
		}
	}
	return j
}

// cpusBusy is each CPU's busy share since m (-1 where unknown).
func (m cpuMark) cpusBusy(now cpuMark) []float64 {
	out := make([]float64, min(len(m.perCPU), len(now.perCPU)))
	for i := range out {
		a, b := m.perCPU[i], now.perCPU[i]
		out[i] = -1
		if b.total > a.total {
			out[i] = (b.busy - a.busy) / (b.total - a.total)
		}
	}
	return out
}

// machineBusy is the share of the machine's CPU time spent busy since m
// (-1 if unknown).
func (m cpuMark) machineBusy(now cpuMark) float64 {
	if now.total <= m.total {
		return -1
	}
	return (now.busy - m.busy) / (now.total - m.total)
}

// selfCores is this process's CPU use since m, in cores.
func (m cpuMark) selfCores(now cpuMark) float64 {
	return (now.self - m.self).Seconds() / now.at.Sub(m.at).Seconds()
}

// clockTicks is the kernel's USER_HZ, the unit of /proc/PID/stat times.
const clockTicks = 100

// procCPU is the CPU time a process has used (zero if unknown).
func procCPU(pid int) time.Duration {
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	// The command name (field 2) may hold spaces; count after its ')'.
	i := strings.LastIndexByte(string(raw), ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(raw)[i+1:]) // f[0] is field 3 (state); utime and stime are fields 14 and 15
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseFloat(f[11], 64)
	st, _ := strconv.ParseFloat(f[12], 64)
	return time.Duration((ut + st) / clockTicks * float64(time.Second))
}

// stepMark is a moment's CPU counters of a load step: the machine's and
// this process's, poise's and the simulators' (from /proc).
type stepMark struct {
	cpu         cpuMark
	poise, sims time.Duration
}

func markStep(poisePID int, sims map[string]*sim) stepMark {
	return stepMark{cpu: markCPU(), poise: procCPU(poisePID), sims: simsCPU(sims)}
}
