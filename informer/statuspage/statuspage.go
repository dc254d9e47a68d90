package informer

import (
	"encoding/json"
	"html/template"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/listwatch/listwatch/reflector"
)

// StatusOptions configures StatusHandler.
type StatusOptions struct {
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

// StatusReport is what StatusHandler serves as JSON.
type StatusReport struct {
	// Time is when the report was made.
	Time time.Time `json:"time"`
	// Informers are the factory's informers, sorted by name.
	Informers []InformerStatus `json:"informers"`
}

// InformerStatus is one informer's part of a StatusReport.
type InformerStatus struct {
	// ID is a stable identifier derived from Name, usable as an HTML id:
	// the page's row for this informer has id "informer-"+ID.
	ID   string `json:"id"`
	Name string `json:"name"`
	// Resource is group/version/resource ("v1/pods" in the core group)
	// when the factory's resource name gives a version, else that name.
	Resource  string `json:"resource,omitempty"`
	Namespace string `json:"namespace,omitempty"`
	Labels    string `json:"labelSelector,omitempty"`
	Fields    string `json:"fieldSelector,omitempty"`
	Started   bool   `json:"started"`
	Synced    bool   `json:"synced"`
	// Healthy is Synced with no last error.
	Healthy bool `json:"healthy"`
	// Phase is the reflector phase's name (listing, streaming, watching,
	// backoff, stopped).
	Phase string `json:"phase"`
	// Reason classifies LastError (reflector.Reason's name); "" when none.
	Reason          string `json:"reason,omitempty"`
	LastError       string `json:"lastError,omitempty"`
	Failures        int    `json:"failures"`
	ResourceVersion string `json:"resourceVersion,omitempty"`
	// StreamFallback is why streaming lists were given up, if they were.
	StreamFallback string `json:"streamFallback,omitempty"`
	Objects        int    `json:"objects"`
	// Bytes estimates the cached objects' memory (Snapshot.Bytes).
	Bytes int64 `json:"bytes"`
	// IndexValues is the number of distinct values of each index.
	IndexValues map[string]int `json:"indexValues,omitempty"`
	Queued      int            `json:"queued"`
	Dropped     int64          `json:"dropped"`
	// Relists counts list cycles by cause, when StatusOptions.Relists is set.
	Relists  map[string]int64 `json:"relists,omitempty"`
	Handlers []HandlerStatus  `json:"handlers"`
}

// HandlerStatus is one handler's lag and work, from Registration.Stats.
type HandlerStatus struct {
	Index                int     `json:"index"`
	Name                 string  `json:"name"`
	Synced               bool    `json:"synced"`
	Pending              int     `json:"pending"`
	OldestPendingSeconds float64 `json:"oldestPendingSeconds"`
	BusySeconds          float64 `json:"busySeconds"`
	Processed            int64   `json:"processed"`
	Coalesced            int64   `json:"coalesced"`
	Panics               int64   `json:"panics"`
	HandlerSeconds       float64 `json:"handlerSeconds"`
}

// StatusHandler serves a live status page of every informer f hands out:
// phase, synced, the reason and text of the last error, resource version,
// cached objects, relists by cause (see StatusOptions.Relists) and each
// handler's lag. It answers JSON (a StatusReport) to ?format=json or an
// Accept header that prefers application/json, and otherwise a small HTML
// page, with no script and no external asset, that reloads itself every
// StatusOptions.Refresh. Each informer is a table row with id
// "informer-"+InformerStatus.ID and class "informer", plus "healthy" or
// "unhealthy" and "phase-"+Phase; its cells have the classes name, phase,
// synced, reason, error, rv, objects, relists and handlers.
func StatusHandler(f *Factory, opts StatusOptions) http.Handler {
	if opts.Title == "" {
		opts.Title = "listwatch informers"
	}
	if opts.Refresh == 0 {
		opts.Refresh = 5 * time.Second
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &statusHandler{f: f, opts: opts}
}

type statusHandler struct {
	f    *Factory
	opts StatusOptions
}

// report builds the StatusReport the handler would serve now.
func (h *statusHandler) report() StatusReport {
	snaps := h.f.Snapshots()
	rep := StatusReport{Time: h.opts.Now(), Informers: make([]InformerStatus, 0, len(snaps))}
	ids := map[string]int{}
	for _, s := range snaps {
		st := InformerStatus{
			Name: s.Name, Resource: resourceName(s), Namespace: s.Selection.Namespace,
			Labels: s.Selection.LabelSelector, Fields: s.Selection.FieldSelector,
			Started: s.Started, Synced: s.Synced, Phase: s.Status.Phase.String(),
			Failures: s.Status.Failures, ResourceVersion: s.Status.LastSyncResourceVersion,
			Objects: s.Objects, Bytes: s.Bytes, IndexValues: s.IndexValues, Queued: s.Queued, Dropped: s.Dropped,
			Handlers: make([]HandlerStatus, 0, len(s.Handlers)),
		}
		st.ID = statusID(s.Name, ids)
		if s.Status.LastError != nil {
			st.LastError = s.Status.LastError.Error()
			st.Reason = s.Status.Reason.String()
		}
		if s.Status.StreamFallback != reflector.ReasonNone {
			st.StreamFallback = s.Status.StreamFallback.String()
		}
		st.Healthy = st.Synced && st.LastError == ""
		if h.opts.Relists != nil {
			st.Relists = h.opts.Relists(s.Name)
		}
		for _, hs := range s.Handlers {
			st.Handlers = append(st.Handlers, HandlerStatus{
				Index: hs.Index, Name: hs.Name, Synced: hs.Synced, Pending: hs.Stats.Pending,
				OldestPendingSeconds: hs.Stats.OldestPending.Seconds(), BusySeconds: hs.Stats.Busy.Seconds(),
				Processed: hs.Stats.Processed, Coalesced: hs.Stats.Coalesced, Panics: hs.Stats.Panics,
				HandlerSeconds: hs.Stats.HandlerTime.Seconds(),
			})
		}
		rep.Informers = append(rep.Informers, st)
	}
	return rep
}

// resourceName shows a snapshot's resource as group/version/resource
// ("v1/pods" for the core group), or as the factory was given it.
func resourceName(s Snapshot) string {
	if s.GVR.Version == "" {
		return s.Resource
	}
	return strings.TrimPrefix(s.GVR.Group+"/"+s.GVR.Version+"/"+s.GVR.Resource, "/")
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

func (h *statusHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
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
	_ = statusPage.Execute(w, pageData{Title: h.opts.Title, Refresh: refresh, StatusReport: rep, ShowRelists: h.opts.Relists != nil})
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
	StatusReport
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

func seconds(s float64) string {
	return (time.Duration(s * float64(time.Second))).Round(time.Millisecond).String()
}

var statusPage = template.Must(template.New("status").Funcs(template.FuncMap{
	"relists": relistList, "seconds": seconds,
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
.lagging { color: #a40000; font-weight: bold; }
</style>
</head>
<body>
<h1>{{.Title}}</h1>
<p id="generated">{{len .Informers}} informers at {{.Time.UTC.Format "2006-01-02 15:04:05Z07:00"}}{{if .Refresh}}; refreshes every {{.Refresh}}s{{end}} · <a href="?format=json">JSON</a></p>
<table id="informers">
<thead><tr><th>informer</th><th>phase</th><th>synced</th><th>reason</th><th>last error</th><th>resource version</th><th>objects</th><th>relists</th><th>handlers: pending, oldest</th></tr></thead>
<tbody>
{{- range $inf := .Informers}}
<tr id="informer-{{.ID}}" class="informer {{if .Healthy}}healthy{{else}}unhealthy{{end}} phase-{{.Phase}}" data-name="{{.Name}}">
<td class="name">{{.Name}}{{if .Resource}}<br><small>{{.Resource}}{{if .Namespace}} in {{.Namespace}}{{end}}{{if .Labels}} labels {{.Labels}}{{end}}{{if .Fields}} fields {{.Fields}}{{end}}</small>{{end}}</td>
<td class="phase">{{.Phase}}{{if .Failures}} ({{.Failures}} failures){{end}}{{if not .Started}} (not started){{end}}</td>
<td class="synced">{{if .Synced}}yes{{else}}no{{end}}</td>
<td class="reason">{{.Reason}}</td>
<td class="error">{{.LastError}}</td>
<td class="rv">{{.ResourceVersion}}</td>
<td class="objects">{{.Objects}}{{if .Queued}} ({{.Queued}} queued){{end}}{{if .Dropped}} ({{.Dropped}} dropped){{end}}</td>
<td class="relists">{{if $.ShowRelists}}{{range relists .Relists}}{{.}}<br>{{else}}0{{end}}{{else}}n/a{{end}}</td>
<td class="handlers"><ul>{{range .Handlers}}<li class="handler" id="informer-{{$inf.ID}}-handler-{{.Index}}"><span class="name">{{.Name}}</span>: <span class="pending{{if .Pending}} lagging{{end}}">{{.Pending}} pending</span>, <span class="oldest">{{seconds .OldestPendingSeconds}}</span>{{if .BusySeconds}}, <span class="busy">busy {{seconds .BusySeconds}}</span>{{end}}{{if .Panics}}, <span class="panics">{{.Panics}} panics</span>{{end}}</li>{{else}}<li>none</li>{{end}}</ul></td>
</tr>
{{- else}}
<tr><td colspan="9">no informers</td></tr>
{{- end}}
</tbody>
</table>
</body>
</html>
`))
