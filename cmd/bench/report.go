package main

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/blogql/blog/tuning"
)

// results is what a run measured; it is written as JSON and summarized in
// a Markdown table.
type results struct {
	Backend    string            `json:"backend"`
	Date       time.Time         `json:"date"`
	Machine    machine           `json:"machine"`
	Versions   map[string]string `json:"versions"`
	Dataset    datasetInfo       `json:"dataset"`
	Settings   settings          `json:"settings"`
	Operations []*opResult       `json:"operations"`
	Memory     memory            `json:"memory"`
}

type machine struct {
	CPU    string `json:"cpu"`
	Cores  int    `json:"cores"`
	OS     string `json:"os"`
	Kernel string `json:"kernel,omitempty"`
	Go     string `json:"go"`
	// LoadBefore is the one-minute load average before the run started:
	// other work on the machine.
	LoadBefore float64 `json:"loadBefore"`
}

type datasetInfo struct {
	Authors     int     `json:"authors"`
	Categories  int     `json:"categories"`
	Posts       int     `json:"posts"`
	Comments    int     `json:"comments"`
	SeedSeconds float64 `json:"seedSeconds"`
	// DataFileMB is the size of the embedded engine's data file after
	// the run; zero on DynamoDB Local.
	DataFileMB float64 `json:"dataFileMB,omitempty"`
}

type settings struct {
	WarmupSeconds float64 `json:"warmupSeconds"`
	Samples       int     `json:"samples"`
	Concurrency   int     `json:"concurrency"`
	RoundSeconds  float64 `json:"roundSeconds"`
	Rounds        int     `json:"rounds"`
	// GOGC and MemoryLimitMB are the garbage collector's setting, the
	// server's default (package tuning) unless the environment set them.
	GOGC          int     `json:"gogc"`
	MemoryLimitMB float64 `json:"memoryLimitMB,omitempty"`
}

type opResult struct {
	Name     string `json:"name"`
	Budget   int    `json:"budget"`
	Requests struct {
		// Server holds the requests of one call by page size.
		Server map[string]int `json:"server"`
		Floor  int            `json:"floor"`
		// Min and Max are the fewest and most requests any measured call
		// of the server made.
		Min int `json:"min"`
		Max int `json:"max"`
	} `json:"requests"`
	// Sequential compares latency at concurrency 1; Ratio is server p50 ÷
	// floor p50.
	Sequential comparisonResult `json:"sequential"`
	// Rounds compare throughput at -concurrency, floor then server in each
	// round; Ratio is server ÷ floor requests per second.
	Rounds []comparisonResult `json:"rounds"`
	// Allocations are the heap allocations of one call: the handler
	// serving it (no HTTP client or connection), and the floor.
	Allocations struct {
		Server float64 `json:"server"`
		Floor  float64 `json:"floor"`
	} `json:"allocations"`
}

type comparisonResult struct {
	Server stats   `json:"server"`
	Floor  stats   `json:"floor"`
	Ratio  float64 `json:"ratio"`
}

type memory struct {
	RSSMB     float64 `json:"rssMB"`
	PeakRSSMB float64 `json:"peakRssMB"`
	// AnonMB and FileMB split the RSS: memory of the process's own, and
	// pages of files it maps (the embedded engine's data file), which
	// the kernel can drop and read again.
	AnonMB      float64 `json:"anonMB"`
	FileMB      float64 `json:"fileMB"`
	HeapInUseMB float64 `json:"heapInUseMB"`
}

func comparison(server, floor stats, of func(stats) float64) comparisonResult {
	c := comparisonResult{Server: server, Floor: floor}
	if of(floor) > 0 {
		c.Ratio = of(server) / of(floor)
	}
	return c
}

func newResults(cfg *config, d *dataset, seeded time.Duration, load float64, gc tuning.GC) *results {
	m := readMachine()
	m.LoadBefore = load
	limit := 0.0
	if gc.MemoryLimit < math.MaxInt64 {
		limit = float64(gc.MemoryLimit) / (1 << 20)
	}
	return &results{
		Backend:  cfg.backend,
		Date:     time.Now().UTC().Truncate(time.Second),
		Machine:  m,
		Versions: versions(),
		Dataset: datasetInfo{
			Authors: len(d.authors), Categories: len(d.categories), Posts: len(d.posts), Comments: d.comments(),
			SeedSeconds: seeded.Seconds(),
		},
		Settings: settings{
			WarmupSeconds: cfg.warmup.Seconds(), Samples: cfg.samples, Concurrency: cfg.concurrency,
			RoundSeconds: cfg.duration.Seconds(), Rounds: cfg.rounds,
			GOGC: gc.Percent, MemoryLimitMB: limit,
		},
	}
}

// op returns the result of op, adding it on first use.
func (r *results) op(op operation) *opResult {
	for _, o := range r.Operations {
		if o.Name == op.name {
			return o
		}
	}
	o := &opResult{Name: op.name, Budget: op.budget}
	o.Requests.Server = map[string]int{}
	r.Operations = append(r.Operations, o)
	return o
}

// median returns the round with the median throughput ratio.
func (o *opResult) median() comparisonResult {
	rounds := slices.Clone(o.Rounds)
	slices.SortFunc(rounds, func(a, b comparisonResult) int { return cmp.Compare(a.Ratio, b.Ratio) })
	return rounds[len(rounds)/2]
}

func readMachine() machine {
	m := machine{CPU: "unknown", Cores: runtime.NumCPU(), OS: runtime.GOOS + "/" + runtime.GOARCH, Go: runtime.Version()}
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPU = strings.TrimSpace(v)
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(b))
	}
	return m
}

// loadAverage returns the one-minute load average from /proc, or zero.
func loadAverage() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	f, _ := strconv.ParseFloat(strings.Fields(string(b))[0], 64)
	return f
}

// versions returns the versions of the modules that do the work.
func versions() map[string]string {
	out := map[string]string{}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return out
	}
	for _, d := range info.Deps {
		switch d.Path {
		case "github.com/99designs/gqlgen", "github.com/vektah/gqlparser/v2", "github.com/graph-gophers/dataloader/v7",
			"github.com/aws/aws-sdk-go-v2/service/dynamodb", "go.etcd.io/bbolt":
			out[d.Path] = d.Version
		}
	}
	return out
}

// readMemory returns the process's resident set, current and peak, from
// /proc (zero elsewhere), and the Go heap in use.
func readMemory() memory {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	m := memory{HeapInUseMB: float64(ms.HeapInuse) / (1 << 20)}
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return m
	}
	for line := range strings.Lines(string(b)) {
		k, v, _ := strings.Cut(line, ":")
		kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
		if err != nil {
			continue
		}
		switch k {
		case "VmRSS":
			m.RSSMB = kb / 1024
		case "VmHWM":
			m.PeakRSSMB = kb / 1024
		case "RssAnon":
			m.AnonMB = kb / 1024
		case "RssFile":
			m.FileMB = kb / 1024
		}
	}
	return m
}

// write saves r as JSON to cfg.out and replaces the backend's table in
// cfg.markdown, each when named.
func (r *results) write(cfg *config) error {
	if cfg.out != "" {
		raw, err := json.MarshalIndent(r, "", "  ")
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(cfg.out), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(cfg.out, append(raw, '\n'), 0o644); err != nil {
			return err
		}
	}
	table := r.markdown()
	fmt.Print(table)
	if cfg.markdown == "" {
		return nil
	}
	doc, err := os.ReadFile(cfg.markdown)
	if err != nil {
		return err
	}
	begin, end := []byte("<!-- results:"+r.Backend+" -->\n"), []byte("<!-- /results:"+r.Backend+" -->")
	i, j := bytes.Index(doc, begin), bytes.Index(doc, end)
	if i < 0 || j < i {
		return fmt.Errorf("%s has no %q … %q block to put the results in", cfg.markdown, strings.TrimSpace(string(begin)), end)
	}
	out := slices.Concat(doc[:i+len(begin)], []byte(table), doc[j:])
	return os.WriteFile(cfg.markdown, out, 0o644)
}

// markdown returns the results as a short Markdown table with a line on
// where and when they were measured.
func (r *results) markdown() string {
	var b strings.Builder
	gc := fmt.Sprintf("GOGC %d", r.Settings.GOGC)
	if r.Settings.MemoryLimitMB > 0 {
		gc += fmt.Sprintf(", GOMEMLIMIT %.0f MiB", r.Settings.MemoryLimitMB)
	}
	fmt.Fprintf(&b, "Measured %s on %s (%d cores, load average %.1f before the run), %s, %s, %s; dataset seeded in %.0f s; warm-up %.0f s, %d samples at concurrency 1, %d × %.0f s rounds at concurrency %d.\n\n",
		r.Date.Format("2006-01-02"), r.Machine.CPU, r.Machine.Cores, r.Machine.LoadBefore, r.Machine.OS, r.Machine.Go, gc,
		r.Dataset.SeedSeconds, r.Settings.WarmupSeconds, r.Settings.Samples, r.Settings.Rounds, r.Settings.RoundSeconds, r.Settings.Concurrency)
	fmt.Fprintf(&b, "| operation | requests (budget) | c1 p50 server / floor | c1 p99 server / floor | **c1 ratio** | c%d server req/s, p50 / p99 | c%[1]d floor req/s | **c%[1]d ratio** | allocations server / floor |\n", r.Settings.Concurrency)
	b.WriteString("|---|---|---|---|---|---|---|---|---|\n")
	for _, o := range r.Operations {
		req := fmt.Sprint(o.Requests.Min)
		if o.Requests.Max != o.Requests.Min {
			req = fmt.Sprintf("%d–%d", o.Requests.Min, o.Requests.Max)
		}
		if n, ok := o.Requests.Server["100"]; ok {
			req += fmt.Sprintf(", %d at first: 100", n)
		}
		s, c := o.Sequential, o.median()
		fmt.Fprintf(&b, "| %s | %s (%d) | %.2f / %.2f ms | %.2f / %.2f ms | **%.2f** | %.0f, %.1f / %.1f ms | %.0f | **%.2f** | %.0f / %.0f |\n",
			o.Name, req, o.Budget, s.Server.P50Millis, s.Floor.P50Millis, s.Server.P99Millis, s.Floor.P99Millis, s.Ratio,
			c.Server.PerSecond, c.Server.P50Millis, c.Server.P99Millis, c.Floor.PerSecond, c.Ratio,
			o.Allocations.Server, o.Allocations.Floor)
	}
	fmt.Fprintf(&b, "\nProcess RSS after the run: %.0f MB (peak %.0f MB; %.0f MB the process's own, %.0f MB mapped files; Go heap in use %.0f MB).",
		r.Memory.RSSMB, r.Memory.PeakRSSMB, r.Memory.AnonMB, r.Memory.FileMB, r.Memory.HeapInUseMB)
	if r.Dataset.DataFileMB > 0 {
		fmt.Fprintf(&b, " Data file after the run: %.1f MB.", r.Dataset.DataFileMB)
	}
	b.WriteString("\n")
	return b.String()
}
