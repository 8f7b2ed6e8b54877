package main

import (
	"runtime"
	"strings"
	"sync"

	"github.com/blogql/blog/admission"
	"github.com/blogql/blog/inflight"
	"github.com/blogql/blog/routing"
)

// platformConfig is the configuration of a server of many publications.
type platformConfig struct {
	// hostPattern is -platform-host-pattern.
	hostPattern routing.Pattern
	// hostLookups is -host-lookup-rate, publicationRate
	// -publication-rate-limit (package routing's limits).
	hostLookups     int
	publicationRate int
	// inflightShare is -publication-inflight-share, in percent.
	inflightShare int
	// executionShare is -publication-execution-slots: 0 the default,
	// negative none.
	executionShare int
	// metricsPublications is -metrics-publications: ids of publications
	// the metrics label besides the first ones served.
	metricsPublications idList
}

// idList is a flag of ids separated by commas.
type idList []string

func (l *idList) String() string {
	if l == nil {
		return ""
	}
	return strings.Join(*l, ",")
}

// Set replaces the list with the ids of s.
func (l *idList) Set(s string) error {
	var ids []string
	for id := range strings.SplitSeq(s, ",") {
		if id = strings.TrimSpace(id); id != "" {
			ids = append(ids, id)
		}
	}
	*l = ids
	return nil
}

// Defaults of platformConfig.
const (
	defaultHostLookups   = 100
	defaultInflightShare = 100
)

// Defaults of -execution-slots (a CPU core's) and -execution-queue. A
// request on the embedded engine runs on the CPU start to end; one on
// DynamoDB mostly waits for its answers, so more run at once.
const (
	slotsPerCore       = 4
	remoteSlotsPerCore = 16
	defaultExecQueue   = 64
)

// executionGate returns the gate of the GraphQL requests executed at
// once (-execution-slots, -execution-queue,
// -publication-execution-slots): nil, no bound, for a negative number of
// slots.
//
// A publication's default share leaves a core to the others: one
// request a core but one where the work of a request is done in one
// place for every publication in turn (the embedded engine, in the
// process; DynamoDB Local or another server at -dynamodb-endpoint, one
// process that answers every publication's requests from one queue), so
// a flood's requests queue ahead of no other publication's for more than
// a core; on AWS, where the table's partitions serve the publications
// apart and a request mostly waits, the slots of those cores.
func executionGate(cfg *config) *admission.Gate {
	slots, share := cfg.execSlots, cfg.platform.executionShare
	cores := runtime.GOMAXPROCS(0)
	switch {
	case slots < 0:
		return nil
	case slots == 0 && cfg.backend() == backendEmbedded:
		slots = slotsPerCore * cores
	case slots == 0:
		slots = remoteSlotsPerCore * cores
	}
	if share == 0 {
		share = max(1, cores-1)
		if cfg.backend() == backendAWS {
			share *= remoteSlotsPerCore
		}
	}
	return admission.New(slots, cfg.execQueue, share)
}

// budgetShares are the publications' shares of the server's budget of
// requests in flight (inflight.Budget.Share): each publication's requests
// hold at most percent of it. Shares are kept for the server's life, a
// few dozen bytes a publication.
type budgetShares struct {
	budget *inflight.Budget
	limit  int64 // 0: the budget itself, unshared

	mu sync.Mutex
	of map[string]*inflight.Budget
}

// newBudgetShares returns the shares of budget (nil: none) of percent of
// it each; 100 or more shares nothing.
func newBudgetShares(budget *inflight.Budget, percent int) *budgetShares {
	s := &budgetShares{budget: budget, of: map[string]*inflight.Budget{}}
	if budget != nil && percent < 100 {
		s.limit = max(1, budget.Limit()*int64(percent)/100)
	}
	return s
}

// share returns the share of the publication id.
func (s *budgetShares) share(id string) *inflight.Budget {
	if s.limit == 0 {
		return s.budget
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.of[id]
	if !ok {
		b = s.budget.Share(s.limit)
		s.of[id] = b
	}
	return b
}
