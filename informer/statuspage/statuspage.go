package statuspage

import (
	"encoding/json"
	"html/template"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/listwatch/listwatch/informer"
	"github.com/listwatch/listwatch/informer/factory"
)

// Options configures Handler.
type Options struct {
	// Title heads the HTML page; default "listwatch informers".
	Title string
	// Refresh is how often the HTML page reloads itself; default 5s,
	// negative means never.
	Refresh time.Duration
	// Relists, when set, returns the number of list cycles of the informer
	// called name, by cause (reflector.Reason names, "None" for the first),
	// e.g. promprovider's Provider.Relists. Without it the page shows no
	// relist counts: an informer does not count them itself.
	Relists func(name string) map[string]int64
	// Now is the clock of the page's timestamp; default time.Now.
	Now func() time.Time
}

// Report is what Handler serves as JSON.
type Report struct {
	// Time is when the report was made.
	Time time.Time `json:"time"`
	// Informers are the factory's informers, sorted by name.
	Informers []Informer `json:"informers"`
}

// Informer is one informer's part of a Report: its informer.Snapshot (whose
// fields it shares in JSON) and what the page adds.
type Informer struct {
	informer.Snapshot
	// ID is a stable identifier derived from Name, usable as an HTML id:
	// the page's row for this informer has id "informer-"+ID.
	ID string `json:"id"`
	// Healthy is Snapshot.Healthy: synced, with no last error.
	Healthy bool `json:"healthy"`
	// Relists counts list cycles by cause, when Options.Relists is set.
	Relists map[string]int64 `json:"relists,omitempty"`
}

// Handler serves a live status page of every informer f hands out: phase,
// synced, the reason and text of the last error, resource version,
// freshness (informer.Freshness: stale, and how far behind the server
// the last Fresh call found the cache), cached objects, the memory they
// take (Snapshot.Bytes; for an on-read cache, what it holds whole and
// fetched: Snapshot.OnRead), relists by cause (see Options.Relists) and
// each handler's lag.
// It answers JSON (a Report) to ?format=json or an Accept header that
// prefers application/json, and otherwise a small HTML page, with no
// script and no external asset, that reloads itself every
// Options.Refresh. Each informer is a table row with id "informer-"+ID and
// class "informer", plus "healthy" or "unhealthy", "phase-" and its phase,
// and "stale" while it is stale; its cells have the classes name, phase,
// synced, reason, error, rv, freshness, objects, bytes, relists and handlers.
//
// src is usually a *factory.Factory; any set of informers that can be
// snapshot will do (crcache's StatusPage serves a controller-runtime
// cache's informers with it).
func Handler(src Source, opts Options) http.Handler {
	if opts.Title == "" {
		opts.Title = "listwatch informers"
	}
	if opts.Refresh == 0 {
		opts.Refresh = 5 * time.Second
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &handler{f: src, opts: opts}
}

// Source is what Handler shows: a set of informers, snapshot on each
// request. *factory.Factory is one.
type Source interface {
	// Snapshots returns a Snapshot of each informer, sorted by name.
	Snapshots() []informer.Snapshot
}

var _ Source = (*factory.Factory)(nil)

type handler struct {
	f    Source
	opts Options
}

// report builds the Report the handler would serve now.
func (h *handler) report() Report {
	snaps := h.f.Snapshots()
	rep := Report{Time: h.opts.Now(), Informers: make([]Informer, 0, len(snaps))}
	ids := map[string]int{}
	for _, s := range snaps {
		inf := Informer{Snapshot: s, ID: statusID(s.Name, ids), Healthy: s.Healthy()}
		if h.opts.Relists != nil {
			inf.Relists = h.opts.Relists(s.Name)
		}
		rep.Informers = append(rep.Informers, inf)
	}
	return rep
}

// statusID turns name into an HTML id: letters, digits, '-' and '_' are
// kept (lower-cased), every other run of characters becomes one '-'. A
// repeated id gets "-2", "-3", ... in name order; seen counts them.
func statusID(name string, seen map[string]int) string {
	var b strings.Builder
	dash := false
	for _, c := range strings.ToLower(name) {
		ok := c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_'
		switch {
		case ok:
			b.WriteRune(c)
			dash = false
		case !dash && b.Len() > 0:
			b.WriteByte('-')
			dash = true
		}
	}
	id := strings.TrimSuffix(b.String(), "-")
	if id == "" {
		id = "unnamed"
	}
	seen[id]++
	if n := seen[id]; n > 1 {
		id += "-" + strconv.Itoa(n)
	}
	return id
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	rep := h.report()
	w.Header().Set("Cache-Control", "no-store")
	if wantsJSON(r) {
		w.Header().Set("Content-Type", "application/json")
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		_ = enc.Encode(rep)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	refresh := 0
	if h.opts.Refresh > 0 {
		refresh = max(int(h.opts.Refresh.Round(time.Second)/time.Second), 1)
	}
	_ = statusPage.Execute(w, pageData{Title: h.opts.Title, Refresh: refresh, Report: rep, ShowRelists: h.opts.Relists != nil})
}

// wantsJSON reports whether r asks for JSON: ?format=json, or an Accept
// header naming application/json before text/html (or without it).
func wantsJSON(r *http.Request) bool {
	switch r.URL.Query().Get("format") {
	case "json":
		return true
	case "html":
		return false
	}
	accept := r.Header.Get("Accept")
	j := strings.Index(accept, "application/json")
	if j < 0 {
		return false
	}
	html := strings.Index(accept, "text/html")
	return html < 0 || j < html
}

type pageData struct {
	Report
	Title       string
	Refresh     int
	ShowRelists bool
}

// relistList renders relist counts sorted by cause.
func relistList(m map[string]int64) []string {
	causes := make([]string, 0, len(m))
	for c, n := range m {
		if n > 0 {
			causes = append(causes, c+" "+strconv.FormatInt(n, 10))
		}
	}
	sort.Strings(causes)
	return causes
}

func duration(d time.Duration) string { return d.Round(time.Millisecond).String() }

// freshness describes what Fresh calls found: "stale (reason)", or "fresh"
// with the time of the last success, or "unchecked" before any, and how
// far behind the cache is.
func freshness(f informer.Freshness) string {
	var out string
	switch {
	case f.Stale:
		out = "stale (" + f.Reason + ")"
	case !f.LastFresh.IsZero():
		out = "fresh at " + f.LastFresh.UTC().Format("15:04:05Z07:00")
	case f.ServerResourceVersion != "":
		out = "not yet fresh"
	default:
		return "unchecked"
	}
	if f.BehindBy > 0 {
		out += ", " + strconv.FormatUint(f.BehindBy, 10) + " behind " + f.ServerResourceVersion
	}
	return out
}

// byteSize writes n bytes in binary units: "512 B", "3.4 MiB".
func byteSize(n int64) string {
	const unit = 1024
	if n < unit {
		return strconv.FormatInt(n, 10) + " B"
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 4; m /= unit {
		div *= unit
		exp++
	}
	return strconv.FormatFloat(float64(n)/float64(div), 'f', 1, 64) + " " + "KMGTP"[exp:exp+1] + "iB"
}

// lastError is the text of the status's last error, "" for none.
func lastError(s informer.Snapshot) string {
	if s.Status.LastError == nil {
		return ""
	}
	return s.Status.LastError.Error()
}

// reason is the name of the last error's reason, "" for none.
func reason(s informer.Snapshot) string {
	if s.Status.LastError == nil {
		return ""
	}
	return s.Status.Reason.String()
}

var statusPage = template.Must(template.New("status").Funcs(template.FuncMap{
	"relists": relistList, "duration": duration, "lastError": lastError, "reason": reason, "freshness": freshness,
	"bytes": byteSize,
}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
{{if .Refresh}}<meta http-equiv="refresh" content="{{.Refresh}}">{{end}}
<title>{{.Title}}</title>
<style>
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em; color: #222; }
table { border-collapse: collapse; width: 100%; }
th, td { border: 1px solid #ccc; padding: 4px 8px; text-align: left; vertical-align: top; }
th { background: #f0f0f0; }
tr.unhealthy { background: #fde8e8; }
tr.healthy td.phase { color: #176117; }
td.error { font-family: monospace; font-size: 12px; max-width: 30em; word-break: break-word; }
td.objects, td.rv { font-family: monospace; }
ul { margin: 0; padding-left: 1.2em; }
.lagging, tr.stale td.freshness { color: #a40000; font-weight: bold; }
</style>
</head>
<body>
<h1>{{.Title}}</h1>
<p id="generated">{{len .Informers}} informers at {{.Time.UTC.Format "2006-01-02 15:04:05Z07:00"}}{{if .Refresh}}; refreshes every {{.Refresh}}s{{end}} · <a href="?format=json">JSON</a></p>
<table id="informers">
<thead><tr><th>informer</th><th>phase</th><th>synced</th><th>reason</th><th>last error</th><th>resource version</th><th>freshness</th><th>objects</th><th>memory</th><th>relists</th><th>handlers: pending, oldest</th></tr></thead>
<tbody>
{{- range $inf := .Informers}}
<tr id="informer-{{.ID}}" class="informer {{if .Healthy}}healthy{{else}}unhealthy{{end}} phase-{{.Status.Phase}}{{if .Freshness.Stale}} stale{{end}}" data-name="{{.Name}}">
<td class="name">{{.Name}}{{if .Resource}}<br><small>{{.Resource}}{{if .Namespace}} in {{.Namespace}}{{end}}{{if .LabelSelector}} labels {{.LabelSelector}}{{end}}{{if .FieldSelector}} fields {{.FieldSelector}}{{end}}</small>{{end}}{{if .Decoder}}<br><small class="decoder">decoded by {{.Decoder}}{{if .DecoderReason}}: {{.DecoderReason}}{{end}}</small>{{end}}</td>
<td class="phase">{{.Status.Phase}}{{if .Status.Failures}} ({{.Status.Failures}} failures){{end}}{{if not .Started}} (not started){{end}}</td>
<td class="synced">{{if .Synced}}yes{{else}}no{{end}}</td>
<td class="reason">{{reason .Snapshot}}</td>
<td class="error">{{lastError .Snapshot}}</td>
<td class="rv">{{.Status.LastSyncResourceVersion}}</td>
<td class="freshness">{{freshness .Freshness}}</td>
<td class="objects">{{.Objects}}{{if .Queued}} ({{.Queued}} queued){{end}}{{if .Dropped}} ({{.Dropped}} dropped){{end}}</td>
<td class="bytes">{{bytes .Bytes}}{{with .OnRead}}<br><small class="onread">{{.Held}} held whole ({{bytes .HeldBytes}}{{if ge .Budget 0}} of {{bytes .Budget}}{{end}}), {{.Fetches}} fetches{{if .FetchErrors}}, {{.FetchErrors}} failed{{end}}</small>{{end}}</td>
<td class="relists">{{if $.ShowRelists}}{{range relists .Relists}}{{.}}<br>{{else}}0{{end}}{{else}}n/a{{end}}</td>
<td class="handlers"><ul>{{range .Handlers}}<li class="handler" id="informer-{{$inf.ID}}-handler-{{.Index}}"><span class="name">{{.Name}}</span>: <span class="pending{{if .Stats.Pending}} lagging{{end}}">{{.Stats.Pending}} pending</span>, <span class="oldest">{{duration .Stats.OldestPending}}</span>{{if .Stats.Busy}}, <span class="busy">busy {{duration .Stats.Busy}}</span>{{end}}{{if .Stats.Panics}}, <span class="panics">{{.Stats.Panics}} panics</span>{{end}}</li>{{else}}<li>none</li>{{end}}</ul></td>
</tr>
{{- else}}
<tr><td colspan="11">no informers</td></tr>
{{- end}}
</tbody>
</table>
</body>
</html>
`))
