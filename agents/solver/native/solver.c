/* The solver's search in C: one source for the `solver` agent (embedded in
 * submissions, loaded with connectx_forge.runtime.load_native) and for the
 * tools (book building, labels, mistakes).  agents/solver/search.py is its
 * pure-Python twin and reference: 6x7 four in a row, the same bitboard layout,
 * scores, pruning, move order, opening-book hook and null-window driver, so
 * that both return the same scores and best moves (tests/test_csolver.py).
 *
 * The transposition table differs: a fixed array indexed by key % size that
 * always replaces, instead of the Python dict that is cleared when full.  A
 * slot keeps the key's low 32 bits and one byte of value (Pons' layout): with
 * an odd size above 2^17 the slot and those bits together determine a key of
 * 49 bits (Chinese remainder theorem), so there are no false hits.  Node counts therefore match the
 * Python search's up to slot collisions (which only add a few nodes), and only
 * while the Python table is not cleared.  The Python table need not copy this
 * layout: only the scores, best moves and (nearly) the node counts are shared.
 *
 * Speed at the agent's table size (tens of megabytes, far beyond the cache):
 * a node's time is mostly its table probe missing the cache, so a slot's key
 * and value sit side by side (one cache line per probe), each node prefetches
 * all its children's slots before its own probe and move sorting (so their
 * misses overlap instead of queueing one after another), and the table asks
 * the kernel for 2 MiB pages (fewer TLB misses).  None of these changes which
 * nodes are searched.
 *
 * Positions of DEEP_MOVES stones or more have their own small table (a few
 * megabytes, DEEP_ENTRIES slots, the same layout): they are most of the nodes
 * but each stands for a small subtree, so their entries are cheap to lose and
 * their probes stay in the cache, while the large table keeps the shallow
 * positions, whose subtrees are large, from being pushed out by them.  The
 * split only moves slot collisions (a few more nodes than one large table);
 * the measured gain is in BENCHMARKS.md (`cxforge bench solver`).  Those
 * shallow positions also look their children up before searching any (an
 * enhanced transposition cutoff, as search.py does).
 *
 * Each engine (cx_new) has its own table, node count and book; the calls are
 * not reentrant (one search at a time in a process, as agents run).
 */
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#define H 7
#define W 7
#define SIZE 42
#define BOTTOM 0x0040810204081ULL
#define FULL (BOTTOM * 63ULL)
#define LOWER 128
#define EMPTY 0     /* a stored value byte: no entry in the slot */
#define OFFSET 64   /* stored = the Python table's entry (v, or v + LOWER) + OFFSET: 43..213, never EMPTY */
#define ABORTED (-1000)
#define INCONSISTENT (-2000)
#define HUGE_PAGE (2ULL << 20) /* the table is aligned to, and a whole number of, 2 MiB pages */
#define DEEP_MOVES 22            /* positions with this many stones or more go to the deep table */
#define DEEP_ENTRIES 524309ULL   /* the deep table's slots: odd and above 2^17, as the large table's size */

static const int ORDER[W] = {3, 2, 4, 1, 5, 0, 6};

/* One table slot: the key's low 32 bits and the value byte side by side (5 bytes, packed), so that a probe
 * reads one cache line, not one in a key array and another in a value array. */
typedef struct __attribute__((packed)) {
    uint32_t key;
    uint8_t val;
} slot_t;

typedef struct {
    slot_t *table;  /* positions of fewer than DEEP_MOVES stones */
    slot_t *deep;   /* the others: DEEP_ENTRIES slots */
    uint64_t bytes; /* the large table's allocation: its size rounded up to whole huge pages */
    uint64_t size;
    uint64_t nodes;
    double deadline;
    jmp_buf abort_jump;
    const uint64_t *book_keys; /* canonical keys, sorted; owned by the caller */
    const int8_t *book_scores;
    int64_t book_count;
    int book_moves; /* no book entry has more stones than this; -1: no book */
} engine;

static engine *E; /* the engine of the call in progress */

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static uint64_t col_mask(int c) { return 63ULL << (c * H); }

static uint64_t winning_cells(uint64_t s, uint64_t mask) {
    uint64_t r = (s << 1) & (s << 2) & (s << 3), p;
    static const int dirs[3] = {H, H - 1, H + 1};
    for (int i = 0; i < 3; i++) {
        int d = dirs[i];
        p = (s << d) & (s << 2 * d);
        r |= p & ((s << 3 * d) | (s >> d));
        p = (s >> d) & (s >> 2 * d);
        r |= p & ((s << d) | (s >> 3 * d));
    }
    return r & (FULL ^ mask);
}

static uint64_t possible_moves(uint64_t mask) { return (mask + BOTTOM) & FULL; }

static int popcount(uint64_t x) { return __builtin_popcountll(x); }

/* The slot of the position with this key and number of stones: in the deep table or the large one. */
static slot_t *slot_of(uint64_t key, int moves) {
    return moves >= DEEP_MOVES ? &E->deep[key % DEEP_ENTRIES] : &E->table[key % E->size];
}

static uint64_t mirror(uint64_t key) {
    uint64_t out = 0;
    for (int c = 0; c < W; c++) out |= ((key >> (c * H)) & 127ULL) << ((W - 1 - c) * H);
    return out;
}

/* The book's score of the position with this key (current + mask), or 127 when it is not there. */
static int book_score(uint64_t key) {
    uint64_t m = mirror(key);
    if (m < key) key = m;
    int64_t lo = 0, hi = E->book_count;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (E->book_keys[mid] < key) lo = mid + 1;
        else hi = mid;
    }
    return lo < E->book_count && E->book_keys[lo] == key ? E->book_scores[lo] : 127;
}

/* The moves in `candidates`, best first: most threats created, then centre first. */
static int sorted_moves(uint64_t cur, uint64_t mask, uint64_t candidates, uint64_t list[W]) {
    int score_of[W], n = 0;
    for (int i = 0; i < W; i++) {  /* insertion sort, stable: centre first on ties */
        uint64_t move = candidates & col_mask(ORDER[i]);
        if (!move) continue;
        int s = popcount(winning_cells(cur | move, mask));
        int j = n++;
        for (; j > 0 && score_of[j - 1] < s; j--) {
            list[j] = list[j - 1];
            score_of[j] = score_of[j - 1];
        }
        list[j] = move;
        score_of[j] = s;
    }
    return n;
}

static int negamax(uint64_t cur, uint64_t mask, int moves, int alpha, int beta) {
    E->nodes++;
    if (!(E->nodes & 4095) && now() > E->deadline) longjmp(E->abort_jump, 1);
    uint64_t t = winning_cells(cur ^ mask, mask);
    uint64_t possible = possible_moves(mask);
    uint64_t forced = possible & t;
    if (forced) {
        if (forced & (forced - 1)) return -((SIZE - moves) / 2);
        possible = forced;
    }
    possible &= ~(t >> 1);
    if (!possible) return -((SIZE - moves) / 2);
    if (moves >= SIZE - 2) return 0;
    int lo = -((SIZE - 2 - moves) / 2);
    if (alpha < lo) {
        alpha = lo;
        if (alpha >= beta) return alpha;
    }
    int hi = (SIZE - 1 - moves) / 2;
    /* Ask for every child's slot now, before this node's own probe and the move sorting: the misses of a table
     * far larger than the cache then overlap with each other and with that work, instead of each child waiting
     * for its own in turn.  (A child's key is the opponent's stones plus its mask.) */
    for (uint64_t rest = possible, opp_mask = (cur ^ mask) + mask; rest; rest &= rest - 1)
        __builtin_prefetch(slot_of(opp_mask + (rest & -rest), moves + 1));
    uint64_t key = cur + mask;
    slot_t *slot = slot_of(key, moves);
    if (slot->val != EMPTY && slot->key == (uint32_t)key) {
        int e = slot->val - OFFSET;
        if (e >= LOWER / 2) {
            lo = e - LOWER;
            if (alpha < lo) {
                alpha = lo;
                if (alpha >= beta) return alpha;
            }
        } else if (e < hi) {
            hi = e;
        }
    }
    if (beta > hi) {
        beta = hi;
        if (alpha >= beta) return beta;
    }
    if (moves <= E->book_moves) {
        int known = book_score(key);
        if (known != 127) return known;
    }
    /* Enhanced transposition cutoff, at the shallow nodes (whose subtrees are large): a child's upper bound
     * in the table is a lower bound of this node, and may reach beta before any child is searched.  The
     * children's slots were prefetched above, so this mostly waits for misses the search would meet anyway. */
    if (moves < DEEP_MOVES) {
        for (uint64_t rest = possible, opp_mask = (cur ^ mask) + mask; rest; rest &= rest - 1) {
            uint64_t child = opp_mask + (rest & -rest);
            slot_t *s = slot_of(child, moves + 1);
            int upper = s->val - OFFSET; /* an upper bound when below LOWER / 2 */
            if (s->val != EMPTY && s->key == (uint32_t)child && upper < LOWER / 2 && -upper > alpha) {
                alpha = -upper;
                if (alpha >= beta) return alpha;
            }
        }
    }
    uint64_t opp = cur ^ mask;
    uint64_t list[W];
    int n = sorted_moves(cur, mask, possible, list);
    for (int i = 0; i < n; i++) {
        int score = -negamax(opp, mask | list[i], moves + 1, -beta, -alpha);
        if (score >= beta) {
            slot->key = (uint32_t)key;
            slot->val = (uint8_t)(score + LOWER + OFFSET);
            return score;
        }
        if (score > alpha) alpha = score;
    }
    slot->key = (uint32_t)key;
    slot->val = (uint8_t)(alpha + OFFSET);
    return alpha;
}

static int can_win_next(uint64_t cur, uint64_t mask) {
    return (winning_cells(cur, mask) & possible_moves(mask)) != 0;
}

static int solve_inner(uint64_t cur, uint64_t mask, int moves, int weak) {
    if (moves >= SIZE) return 0;
    if (can_win_next(cur, mask)) return weak ? 1 : (SIZE + 1 - moves) / 2;
    int lo = weak ? -1 : -((SIZE - moves) / 2), hi = weak ? 1 : (SIZE + 1 - moves) / 2;
    while (lo < hi) {
        int med = lo + (hi - lo) / 2;
        int half_lo = lo < 0 ? -((-lo) / 2) : lo / 2;
        int half_hi = hi >= 0 ? hi / 2 : -((-hi + 1) / 2);
        if (med <= 0 && half_lo < med) med = half_lo;
        else if (med >= 0 && half_hi > med) med = half_hi;
        int r = negamax(cur, mask, moves, med, med + 1);
        if (r <= med) hi = r;
        else lo = r;
    }
    if (weak) return (lo > 0) - (lo < 0);
    return lo;
}

static int column_of(uint64_t move) { return (63 - __builtin_clzll(move)) / H; }

/* ---- the API (ctypes): agents/solver/native.py ----------------------------- */

/* A new engine with a large table of `entries` slots (odd, above 2^17; a prime far
 * from a power of two spreads keys best) and the deep table, or NULL when memory is short or `entries` is not
 * such a number. */
engine *cx_new(uint64_t entries) {
    engine *e = calloc(1, sizeof *e);
    if (!e || entries % 2 == 0 || entries <= (1u << 17)) return free(e), NULL;
    e->size = entries;
    e->bytes = (entries * sizeof(slot_t) + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE;
    e->book_moves = -1;
    void *table = NULL;
    if (posix_memalign(&table, HUGE_PAGE, e->bytes) != 0) return free(e), NULL;
#ifdef MADV_HUGEPAGE
    /* Random probes over tens of megabytes miss the TLB on nearly every node with 4 KiB pages; 2 MiB pages
     * (where the kernel grants them: a hint, not a requirement) make those misses rare. */
    madvise(table, e->bytes, MADV_HUGEPAGE);
#endif
    memset(table, 0, e->bytes);
    e->table = table;
    e->deep = malloc(DEEP_ENTRIES * sizeof(slot_t));
    if (!e->deep) return free(table), free(e), NULL;
    memset(e->deep, 0, DEEP_ENTRIES * sizeof(slot_t)); /* written now: no first touch in a search */
    return e;
}

void cx_free(engine *e) {
    if (!e) return;
    free(e->table);
    free(e->deep);
    free(e);
}

/* Forget the tables and the node count (every page of the tables written, as the next search will; cx_new
 * writes them all once too, so that a search never pays for a page's first touch). */
void cx_reset(engine *e) {
    memset(e->table, 0, e->bytes);
    memset(e->deep, 0, DEEP_ENTRIES * sizeof(slot_t));
    e->nodes = 0;
}

uint64_t cx_nodes(engine *e) { return e->nodes; }

/* The opening book (agents/solver/book.py): `count` sorted canonical keys and their scores, kept alive by the
 * caller; the search returns a book score for any position of up to `max_moves` stones it finds there. */
void cx_set_book(engine *e, const uint64_t *keys, const int8_t *scores, int64_t count, int max_moves) {
    e->book_keys = keys;
    e->book_scores = scores;
    e->book_count = count;
    e->book_moves = count > 0 ? max_moves : -1;
}

/* The score (Pons' convention; weak: -1/0/1), or ABORTED past `seconds`. */
int cx_solve(engine *e, uint64_t cur, uint64_t mask, int moves, int weak, double seconds) {
    E = e;
    e->deadline = now() + seconds;
    if (setjmp(e->abort_jump)) return ABORTED;
    return solve_inner(cur, mask, moves, weak);
}

/* One window search (the side to move must not be able to win at once), or ABORTED past `seconds`. */
int cx_negamax(engine *e, uint64_t cur, uint64_t mask, int moves, int alpha, int beta, double seconds) {
    E = e;
    e->deadline = now() + seconds;
    if (setjmp(e->abort_jump)) return ABORTED;
    return negamax(cur, mask, moves, alpha, beta);
}

/* Solver.best_move: writes the column and returns the score, or ABORTED past `seconds`. */
int cx_best_move(engine *e, uint64_t cur, uint64_t mask, int moves, int weak, double seconds, int *column) {
    E = e;
    e->deadline = now() + seconds;
    if (setjmp(e->abort_jump)) return ABORTED;
    uint64_t possible = possible_moves(mask), wins = winning_cells(cur, mask) & possible;
    for (int i = 0; i < W; i++) {
        if (wins & col_mask(ORDER[i])) {
            *column = ORDER[i];
            return weak ? 1 : (SIZE + 1 - moves) / 2;
        }
    }
    uint64_t t = winning_cells(cur ^ mask, mask), cand = possible, forced = possible & t;
    if (forced) cand = (forced & (forced - 1)) ? 0 : forced;
    cand &= ~(t >> 1);
    uint64_t list[W];
    int n = sorted_moves(cur, mask, cand ? cand : possible, list);
    if (!cand) {
        uint64_t threats = t & possible;
        *column = threats ? column_of(threats & -threats) : column_of(list[0]);
        return weak ? -1 : -((SIZE - moves) / 2);
    }
    int score = solve_inner(cur, mask, moves, weak);
    if (weak && score < 0) {
        *column = column_of(list[0]);
        return score;
    }
    for (int i = 0; i < n; i++) {
        if (negamax(cur ^ mask, mask | list[i], moves + 1, -score, -score + 1) <= -score) {
            *column = column_of(list[i]);
            return score;
        }
    }
    return INCONSISTENT;
}
