package embedded

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// Options configure an Engine.
type Options struct {
	// Path is the data file. Empty means a database that lives in memory
	// and is gone when the Engine is closed or dropped: for tests.
	Path string
	// LockTimeout bounds how long Open waits for another process that
	// holds the data file; zero means DefaultLockTimeout.
	LockTimeout time.Duration
	// Now is the clock of TTL expiry and idempotency tokens; nil means
	// time.Now.
	Now func() time.Time
	// TTLInterval is how often expired items are looked for; zero means
	// DefaultTTLInterval, negative never (SweepExpired still works).
	TTLInterval time.Duration
	// StreamRetention is how long DynamoDB Streams records are kept; zero
	// means DefaultStreamRetention (24 hours, as DynamoDB keeps them).
	StreamRetention time.Duration
}

const (
	// DefaultLockTimeout is how long Open waits for the data file's lock.
	DefaultLockTimeout = time.Second
	// DefaultTTLInterval is how often expired items are deleted.
	DefaultTTLInterval = 30 * time.Second
	// fileMmapSize is the address space mapped for a data file up front:
	// bbolt must pause readers to map more, so map enough for most blogs
	// at once. It is address space, not memory.
	fileMmapSize = 1 << 30
)

// ErrLocked means the data file is held by another process, such as a
// server already running on it.
var ErrLocked = errors.New("data file is in use by another process")

// Engine is a DynamoDB-compatible database in this process. It answers the
// DynamoDB JSON protocol as an http.RoundTripper (for an SDK client in the
// same process) and as an http.Handler. It is safe for concurrent use.
type Engine struct {
	s *store
}

// Open opens (or creates) the database of opts. It fails with an error
// matching ErrLocked when another process holds the data file, and with
// other errors when the file cannot be opened or is not a database.
func Open(opts Options) (*Engine, error) {
	if opts.LockTimeout == 0 {
		opts.LockTimeout = DefaultLockTimeout
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.TTLInterval == 0 {
		opts.TTLInterval = DefaultTTLInterval
	}
	if opts.StreamRetention <= 0 {
		opts.StreamRetention = DefaultStreamRetention
	}
	s, err := openStore(opts)
	if err != nil {
		return nil, err
	}
	e := &Engine{s: s}
	// An engine its user dropped without closing (a test's client, say)
	// releases its file when it is collected.
	runtime.AddCleanup(e, func(s *store) { _ = s.close() }, s)
	return e, nil
}

// OpenMemory returns an in-memory database, for tests. It fails only when
// no temporary file can be made.
func OpenMemory() (*Engine, error) { return Open(Options{}) }

// Close waits for the operations in flight and closes the data file.
// Operations after Close fail.
func (e *Engine) Close() error { return e.s.close() }

// Path returns the data file, or "" for an in-memory database.
func (e *Engine) Path() string {
	if e.s.memory {
		return ""
	}
	return e.s.db.Path()
}

// store is the state behind an Engine; it holds no reference to the
// Engine, so a dropped Engine can be collected and its store closed.
type store struct {
	db     *bolt.DB
	memory bool
	now    func() time.Time

	retention time.Duration // of stream records

	commits committer

	mu     sync.RWMutex
	tables map[string]*tableDef // the definitions, replaced, never changed

	closeOnce sync.Once
	closing   chan struct{}
	sweeper   sync.WaitGroup
	closeErr  error
	cleanup   func()

	// onCommit, when set, sees every committed change of an item, in
	// commit order, after it is durable: the one place a change feed
	// reads from. It may be set while the sweeper commits.
	onCommit atomic.Pointer[func([]itemChange)]
}

// openStore opens the bbolt file of opts, or a temporary one that is
// removed at once for an in-memory store.
func openStore(opts Options) (*store, error) {
	s := &store{now: opts.Now, retention: opts.StreamRetention, closing: make(chan struct{}), tables: map[string]*tableDef{}}
	s.commits.s = s
	bopts := &bolt.Options{
		Timeout:        opts.LockTimeout,
		NoFreelistSync: true, // rebuilt at open; commits write less
		FreelistType:   bolt.FreelistMapType,
		NoStatistics:   true,
	}
	path := opts.Path
	if path == "" {
		s.memory = true
		f, err := os.CreateTemp(memoryDir(), "dynamodb-*.db")
		if err != nil {
			return nil, fmt.Errorf("in-memory database: %w", err)
		}
		path = f.Name()
		f.Close()
		bopts.NoSync = true
		bopts.NoGrowSync = true
	} else {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return nil, fmt.Errorf("data directory: %w", err)
		}
		bopts.InitialMmapSize = fileMmapSize
	}
	db, err := bolt.Open(path, 0o600, bopts)
	if s.memory {
		// Unlinked while open: the space goes back when it is closed, and
		// nothing is left behind if the process dies.
		if rmErr := os.Remove(path); rmErr != nil && err == nil {
			s.cleanup = func() { _ = os.Remove(path) }
		}
	}
	if errors.Is(err, berrors.ErrTimeout) {
		return nil, fmt.Errorf("open %s: %w (is another server running on it?)", path, ErrLocked)
	}
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	s.db = db
	if err := s.load(); err != nil {
		db.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	if opts.TTLInterval > 0 {
		s.sweeper.Add(1)
		go s.sweepEvery(opts.TTLInterval)
	}
	return s, nil
}

// memoryDir is where in-memory databases keep their (unlinked) file: a
// RAM file system when there is one.
func memoryDir() string {
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
		if f, err := os.CreateTemp("/dev/shm", ".probe-*"); err == nil {
			f.Close()
			os.Remove(f.Name())
			return "/dev/shm"
		}
	}
	return os.TempDir()
}

func (s *store) close() error {
	s.closeOnce.Do(func() {
		close(s.closing)
		s.sweeper.Wait()
		s.closeErr = s.db.Close()
		if s.cleanup != nil {
			s.cleanup()
		}
	})
	return s.closeErr
}

// table returns the definition of the table name, or nil.
func (s *store) table(name string) *tableDef {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.tables[name]
}

// setTable replaces (or, with nil, removes) a table's definition in the
// cache, after its change committed.
func (s *store) setTable(name string, def *tableDef) {
	s.mu.Lock()
	defer s.mu.Unlock()
	next := make(map[string]*tableDef, len(s.tables)+1)
	for k, v := range s.tables {
		next[k] = v
	}
	if def == nil {
		delete(next, name)
	} else {
		next[name] = def
	}
	s.tables = next
}
