package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"
)

// result is the outcome of one test or spec.
type result struct {
	name     string
	state    string   // pass, fail, skip
	subtests []string // the failed subtests of a failed test
}

// summary reads a go test -json stream (-gotest) and any Ginkgo JSON reports
// (-ginkgo, comma-separated), prints pass/fail/skip counts for the suite, and
// compares the failures with the known-failures list. It exits non-zero on a
// failure not on the list, or when the run failed outside any test (a build
// error, a panic in a suite node, a timeout). A listed test that passes is
// only reported, so the list can shrink.
func summary(args []string) error {
	fs := flag.NewFlagSet("summary", flag.ExitOnError)
	suite := fs.String("suite", "", "suite name, as in the known-failures list")
	known := fs.String("known", "", "known-failures file (suite | name | reason)")
	gotest := fs.String("gotest", "", "go test -json output file")
	ginkgo := fs.String("ginkgo", "", "comma-separated Ginkgo JSON report files")
	exitCode := fs.Int("exit", 0, "exit status of go test")
	droppedFile := fs.String("dropped", "", "the declarations dropped from the tests (hack/peer/tool rewrite -dropped), listed with their reasons")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *gotest == "" {
		return fmt.Errorf("summary: -gotest is required")
	}
	results, broken, err := readGoTest(*gotest)
	if err != nil {
		return err
	}
	specFailures := 0
	for _, path := range strings.Split(*ginkgo, ",") {
		if path == "" {
			continue
		}
		specs, b, err := readGinkgo(path)
		if err != nil {
			return err
		}
		for _, r := range specs {
			if r.state == "fail" {
				specFailures++
			}
		}
		results = append(results, specs...)
		broken = append(broken, b...)
	}
	if len(ginkgoFailed) > 0 && specFailures == 0 {
		broken = append(broken, fmt.Sprintf("Ginkgo suite runner(s) %v failed with no failed spec in the reports", ginkgoFailed))
	}
	knownFail, err := readKnown(*known, *suite)
	if err != nil {
		return err
	}
	isKnown := func(r result) (string, bool) {
		if why, ok := knownFail[r.name]; ok {
			return why, true
		}
		if len(r.subtests) == 0 {
			return "", false
		}
		var whys []string
		for _, sub := range r.subtests {
			why, ok := knownFail[sub]
			if !ok {
				return "", false
			}
			whys = append(whys, why)
		}
		return strings.Join(slices.Compact(whys), "; "), true
	}
	used := map[string]bool{}
	counts := map[string]int{}
	var unexpected, expected []string
	for _, r := range results {
		counts[r.state]++
		why, ok := isKnown(r)
		if ok {
			used[r.name] = true
			for _, sub := range r.subtests {
				used[sub] = true
			}
		}
		switch {
		case r.state == "fail" && ok:
			expected = append(expected, fmt.Sprintf("%s  (%s)", r.name, why))
		case r.state == "fail":
			msg := r.name
			if len(r.subtests) > 0 {
				msg += " (failed subtests: " + strings.Join(r.subtests, ", ") + ")"
			}
			unexpected = append(unexpected, msg)
		}
	}
	var fixed, hung []string
	for name, why := range knownFail {
		switch {
		case isHang(why):
			hung = append(hung, fmt.Sprintf("%s  (%s)", name, why))
		case !used[name] || !failed(results, name):
			fixed = append(fixed, name)
		}
	}
	slices.Sort(hung)
	slices.Sort(fixed)
	dropped, err := readDropped(*droppedFile)
	if err != nil {
		return err
	}
	droppedNote := ""
	if *droppedFile != "" {
		droppedNote = fmt.Sprintf(", %d dropped", len(dropped))
	}
	fmt.Printf("peer %-28s %4d passed, %3d failed (%d known), %3d skipped, %d not run (known to hang)%s\n",
		*suite, counts["pass"], counts["fail"], len(expected), counts["skip"], len(hung), droppedNote)
	printDropped(dropped)
	for _, n := range expected {
		fmt.Printf("    known failure: %s\n", n)
	}
	for _, n := range hung {
		fmt.Printf("    known failure, not run: %s\n", n)
	}
	for _, n := range unexpected {
		fmt.Printf("    FAILED (not on hack/peer/known-failures.txt): %s\n", n)
	}
	for _, n := range fixed {
		fmt.Printf("    now passes or did not run, remove from hack/peer/known-failures.txt: %s\n", n)
	}
	if len(results) == 0 && len(broken) == 0 {
		broken = append(broken, "no test results at all")
	}
	if *exitCode != 0 && counts["fail"] == 0 && len(broken) == 0 {
		broken = append(broken, fmt.Sprintf("go test exited %d with no failing test", *exitCode))
	}
	for _, b := range broken {
		fmt.Printf("    BROKEN: %s\n", b)
	}
	if len(unexpected) > 0 || len(broken) > 0 {
		os.Exit(1)
	}
	return nil
}

// failed reports whether the test (or subtest) name failed in results.
func failed(results []result, name string) bool {
	for _, r := range results {
		if r.state == "fail" && (r.name == name || slices.Contains(r.subtests, name)) {
			return true
		}
	}
	return false
}

// readGoTest reads a go test -json stream. Results are top-level tests,
// named <package base name>.<Test>. A failing test counts as known when it is
// on the list itself or when every failing subtest of it is
// (<package>.<Test>/<subtest>), so a new failure in another subtest is
// still caught. A test that only ran a Ginkgo suite (its output has "Ran N
// of M Specs") is left out: its specs are counted from the Ginkgo report.
func readGoTest(path string) ([]result, []string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	type event struct {
		Action, Package, ImportPath, Test, Output string
	}
	state := map[string]string{}
	var order []string
	var broken []string
	ginkgoRunner := map[string]bool{}
	failedSubtests := map[string][]string{}
	pkgTestsFailed := map[string]bool{}
	pkgOutput := map[string][]string{}
	buildOutput := map[string][]string{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if json.Unmarshal(line, &e) != nil || e.Action == "" {
			if s := strings.TrimSpace(string(line)); s != "" {
				broken = append(broken, s)
			}
			continue
		}
		switch e.Action {
		case "build-output":
			buildOutput[e.ImportPath] = append(buildOutput[e.ImportPath], e.Output)
			continue
		case "build-fail":
			broken = append(broken, fmt.Sprintf("build of %s failed:\n%s", e.ImportPath,
				strings.Join(lastN(buildOutput[e.ImportPath], 20), "")))
			continue
		}
		pkg := e.Package[strings.LastIndex(e.Package, "/")+1:]
		if e.Test == "" {
			if e.Action == "output" {
				pkgOutput[e.Package] = append(pkgOutput[e.Package], e.Output)
			}
			if e.Action == "fail" && !pkgTestsFailed[e.Package] {
				out := strings.Join(lastN(pkgOutput[e.Package], 15), "")
				broken = append(broken, fmt.Sprintf("package %s failed outside any test:\n%s", e.Package, out))
			}
			continue
		}
		name := pkg + "." + e.Test
		top, _, isSub := strings.Cut(name, "/")
		if e.Action == "output" && ginkgoRunOutput(e.Output) {
			ginkgoRunner[top] = true
		}
		if isSub {
			if e.Action == "fail" {
				failedSubtests[top] = append(failedSubtests[top], name)
			}
			continue
		}
		switch e.Action {
		case "pass", "fail", "skip":
			if _, seen := state[name]; !seen {
				order = append(order, name)
			}
			state[name] = e.Action
			if e.Action == "fail" {
				pkgTestsFailed[e.Package] = true
			}
		case "run":
			if _, seen := state[name]; !seen {
				order = append(order, name)
				state[name] = "running"
			}
		}
	}
	var out []result
	for _, n := range order {
		st := state[n]
		if ginkgoRunner[n] {
			if st != "pass" {
				// Its failed specs are in the Ginkgo report; a failure
				// with none there is reported by the caller.
				ginkgoFailed = append(ginkgoFailed, n)
			}
			continue
		}
		if st == "running" { // a panic or timeout took the binary down
			st = "fail"
			broken = append(broken, n+" never finished (panic or timeout)")
		}
		out = append(out, result{name: n, state: st, subtests: failedSubtests[n]})
	}
	return out, broken, sc.Err()
}

// ginkgoFailed lists the go tests that ran a Ginkgo suite and failed.
var ginkgoFailed []string

func ginkgoRunOutput(s string) bool {
	i := strings.Index(s, "Ran ")
	return i >= 0 && strings.Contains(s[i:], " Specs in ")
}

func lastN(s []string, n int) []string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

func readGinkgo(path string) ([]result, []string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	var reports []struct {
		SuiteDescription string
		SuiteSucceeded   bool
		SpecReports      []struct {
			ContainerHierarchyTexts []string
			LeafNodeText            string
			LeafNodeType            string
			State                   string
			Failure                 *struct{ Message string }
		}
	}
	if err := json.Unmarshal(data, &reports); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	var out []result
	var broken []string
	for _, r := range reports {
		for _, s := range r.SpecReports {
			name := strings.Join(append(slices.Clone(s.ContainerHierarchyTexts), s.LeafNodeText), " ")
			var st string
			switch s.State {
			case "passed":
				st = "pass"
			case "skipped", "pending":
				st = "skip"
			default:
				st = "fail"
			}
			if s.LeafNodeType != "It" {
				// BeforeSuite, AfterSuite, ReportAfterSuite...: only failures matter.
				if st == "fail" {
					msg := ""
					if s.Failure != nil {
						msg = s.Failure.Message
					}
					broken = append(broken, fmt.Sprintf("%s %s: %s", s.LeafNodeType, s.State, firstLine(msg)))
				}
				continue
			}
			out = append(out, result{name: name, state: st})
		}
	}
	return out, broken, nil
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// readKnown returns the known failures of one suite: name -> reason.
func readKnown(path, suite string) (map[string]string, error) {
	m := map[string]string{}
	if path == "" {
		return m, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, err
	}
	for i, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		parts := strings.Split(line, "|")
		if len(parts) < 3 {
			return nil, fmt.Errorf("%s:%d: want 'suite | name | reason'", path, i+1)
		}
		if strings.TrimSpace(parts[0]) == suite {
			m[strings.TrimSpace(parts[1])] = strings.TrimSpace(strings.Join(parts[2:], "|"))
		}
	}
	return m, nil
}

// isHang reports whether a known failure's reason says it hangs: such a test
// is not run at all (see hangs).
func isHang(reason string) bool { return strings.HasPrefix(strings.ToLower(reason), "hangs") }

// hangs prints a go test -skip pattern matching the suite's known failures
// that hang (reason starting with "hangs"), or nothing. Names lose their
// "<package>." prefix. go test splits -skip at slashes before matching each
// level, so subtests can be skipped only when all the hanging entries are
// subtests of one test.
func hangs(args []string) error {
	fs := flag.NewFlagSet("hangs", flag.ExitOnError)
	suite := fs.String("suite", "", "suite name, as in the known-failures list")
	known := fs.String("known", "", "known-failures file (suite | name | reason)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	knownFail, err := readKnown(*known, *suite)
	if err != nil {
		return err
	}
	var tops []string
	subs := map[string][]string{} // parent -> hanging subtests
	for name, why := range knownFail {
		if !isHang(why) {
			continue
		}
		_, test, _ := strings.Cut(name, ".")
		parent, sub, ok := strings.Cut(test, "/")
		if ok {
			subs[parent] = append(subs[parent], regexp.QuoteMeta(sub))
		} else {
			tops = append(tops, regexp.QuoteMeta(test))
		}
	}
	if len(subs) > 1 || (len(subs) == 1 && len(tops) > 0) {
		return fmt.Errorf("hangs: hanging subtests can be skipped exactly only when they are the suite's only hanging entries, under one parent; list the parent test instead")
	}
	var alts []string
	for parent, ss := range subs {
		slices.Sort(ss)
		alts = append(alts, "^"+regexp.QuoteMeta(parent)+"$/^(?:"+strings.Join(ss, "|")+")$")
	}
	for _, t := range tops {
		alts = append(alts, "^"+t+"$")
	}
	slices.Sort(alts)
	fmt.Println(strings.Join(alts, "|"))
	return nil
}

// droppedTest is a test, benchmark, example or fuzz test that rewrite
// dropped.
type droppedTest struct{ name, file, reason string }

// readDropped reads rewrite's -dropped file and returns the dropped tests
// (helpers they used are named in their reasons); "" reads nothing.
func readDropped(path string) ([]droppedTest, error) {
	if path == "" {
		return nil, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []droppedTest
	for _, line := range strings.Split(string(data), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		parts := strings.SplitN(line, " | ", 3)
		if len(parts) != 3 {
			return nil, fmt.Errorf("%s: want 'name | file | reason', got %q", path, line)
		}
		_, decl, _ := strings.Cut(parts[0], ".")
		for _, prefix := range []string{"Test", "Benchmark", "Example", "Fuzz"} {
			if strings.HasPrefix(decl, prefix) {
				out = append(out, droppedTest{parts[0], parts[1], parts[2]})
				break
			}
		}
	}
	return out, nil
}

// printDropped prints the count of dropped tests per package, then each
// with its reason.
func printDropped(ds []droppedTest) {
	if len(ds) == 0 {
		return
	}
	per := map[string]int{}
	var pkgs []string
	for _, d := range ds {
		pkg, _, _ := strings.Cut(d.name, ".")
		if per[pkg] == 0 {
			pkgs = append(pkgs, pkg)
		}
		per[pkg]++
	}
	slices.Sort(pkgs)
	var counts []string
	for _, p := range pkgs {
		counts = append(counts, fmt.Sprintf("%s %d", p, per[p]))
	}
	fmt.Printf("    dropped (need client-go's unexported identifiers), per package: %s\n", strings.Join(counts, ", "))
	for _, d := range ds {
		fmt.Printf("    dropped: %s (%s: %s)\n", d.name, d.file, d.reason)
	}
}
