package proc

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"syscall"
)

func inspect(pid int) (Info, error) {
	dir := "/proc/" + strconv.Itoa(pid)
	data, err := os.ReadFile(dir + "/stat")
	if err != nil {
		return Info{}, fmt.Errorf("process %d: %w", pid, err)
	}
	info, err := parseStat(pid, data)
	if err != nil {
		return Info{}, err
	}
	info.Exe, _ = os.Readlink(dir + "/exe")
	if fi, err := os.Stat(dir); err == nil {
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			info.UID = int(st.Uid)
		}
	}
	return info, nil
}

// parseStat reads /proc/PID/stat: the command name is in parentheses and
// may itself hold them and spaces, so the fields after it are counted from
// the last ')'.
func parseStat(pid int, data []byte) (Info, error) {
	open, end := bytes.IndexByte(data, '('), bytes.LastIndexByte(data, ')')
	if open < 0 || end < open {
		return Info{}, fmt.Errorf("process %d: unreadable stat %q", pid, data)
	}
	f := bytes.Fields(data[end+1:])
	// state ppid pgrp session tty_nr tpgid
	if len(f) < 6 {
		return Info{}, fmt.Errorf("process %d: short stat %q", pid, data)
	}
	num := func(b []byte) int { n, _ := strconv.Atoi(string(b)); return n }
	return Info{PID: pid, Comm: string(data[open+1 : end]), PPID: num(f[1]), PGRP: num(f[2]), TPGID: num(f[5])}, nil
}

func inGroup(pgrp int) ([]Info, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	var out []Info
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue // it ended meanwhile
		}
		if info, err := parseStat(pid, data); err == nil && info.PGRP == pgrp {
			if full, err := inspect(pid); err == nil {
				out = append(out, full)
			}
		}
	}
	return out, nil
}

func stdin(pid int) string {
	path, _ := os.Readlink("/proc/" + strconv.Itoa(pid) + "/fd/0")
	return path
}

func cmdline(pid int) []string {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil || len(data) == 0 {
		return nil
	}
	var out []string
	for _, a := range bytes.Split(bytes.TrimSuffix(data, []byte{0}), []byte{0}) {
		out = append(out, string(a))
	}
	return out
}
