package informertest

import (
	"strings"
	"sync"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
)

// LogLines collects a logr.Logger's output, one string a line ("prefix
// args", as funcr formats them). Safe for concurrent use.
type LogLines struct {
	mu    sync.Mutex
	lines []string
}

// Logger returns a logger that writes into l.
func (l *LogLines) Logger() logr.Logger { return l.LoggerWith(funcr.Options{}) }

// LoggerWith returns a logger with opts that writes into l.
func (l *LogLines) LoggerWith(opts funcr.Options) logr.Logger {
	return funcr.New(func(prefix, args string) {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.lines = append(l.lines, prefix+" "+args)
	}, opts)
}

// Matching returns the lines that contain sub.
func (l *LogLines) Matching(sub string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, s := range l.lines {
		if strings.Contains(s, sub) {
			out = append(out, s)
		}
	}
	return out
}
