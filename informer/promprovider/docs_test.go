package promprovider

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"
)

// The families are listed in one place, docs/operations.md's table under
// "Metrics": it must name exactly the families a Provider describes, no
// more, no fewer.
func TestOperationsDocListsEveryFamily(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "operations.md"))
	if err != nil {
		t.Fatal(err)
	}
	var documented []string
	for _, m := range regexp.MustCompile("(?m)^\\| `(informer_[a-z_]+)` \\|").FindAllSubmatch(doc, -1) {
		documented = append(documented, string(m[1]))
	}
	name := regexp.MustCompile(`fqName: "([a-z_]+)"`)
	var described []string
	for _, d := range allDescs {
		m := name.FindStringSubmatch(d.String())
		if m == nil {
			t.Fatalf("cannot read the name of %v", d)
		}
		described = append(described, m[1])
	}
	slices.Sort(documented)
	slices.Sort(described)
	if !slices.Equal(documented, described) {
		t.Errorf("docs/operations.md lists %v\nthe provider describes %v", documented, described)
	}
}
