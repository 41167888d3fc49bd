package promfabric

import (
	"bufio"
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Node descriptions and node-name-map names come from outside: whatever
// they hold, the line written for them parses, with the value as given
// (invalid UTF-8 replaced).
func FuzzSeriesText(f *testing.F) {
	for _, s := range []string{"", "hca1 HCA-1", `a"b\c`, "x\ny", "\xff\xfe", "é"} {
		f.Add(s, "1")
	}
	f.Fuzz(func(t *testing.T, name, port string) {
		s := makeSeries([]string{"name", "port"}, []string{name, port})
		var b bytes.Buffer
		w := bufio.NewWriter(&b)
		ts := &textSink{w: w}
		ts.begin(famPortInfo)
		ts.value(&s, 1)
		w.Flush()
		p := expfmt.NewTextParser(model.UTF8Validation)
		mfs, err := p.TextToMetricFamilies(bytes.NewReader(b.Bytes()))
		if err != nil {
			t.Fatalf("%q: %v\n%s", name, err, b.String())
		}
		mf := mfs[famPortInfo.fullName()]
		if mf == nil || len(mf.Metric) != 1 {
			t.Fatalf("%q: %d families", name, len(mfs))
		}
		want := map[string]string{"name": strings.ToValidUTF8(name, "\uFFFD"), "port": strings.ToValidUTF8(port, "\uFFFD")}
		for _, l := range mf.Metric[0].Label {
			if got := l.GetValue(); got != want[l.GetName()] || !utf8.ValidString(got) {
				t.Errorf("%s = %q, want %q", l.GetName(), got, want[l.GetName()])
			}
		}
	})
}
