/* A compiled twin of agents/solver/search.py, for offline work only (opening
 * book, labels): 6x7 four in a row, the same bitboard layout, scores, pruning,
 * move order and null-window driver, so that it returns the same scores and
 * best moves.  Never bundled: submissions stay pure Python.
 *
 * The transposition table differs: a fixed array indexed by key % size that
 * keeps the full key (no false hits) and always replaces, instead of the
 * Python dict that is cleared when full.  Node counts therefore match the
 * Python search's up to slot collisions (which only add a few nodes), and only
 * while the Python table is not cleared.
 */
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#define H 7
#define W 7
#define SIZE 42
#define BOTTOM 0x0040810204081ULL
#define FULL (BOTTOM * 63ULL)
#define LOWER 128

static const int ORDER[W] = {3, 2, 4, 1, 5, 0, 6};

static uint64_t *tt_keys;
static int16_t *tt_vals;
static uint64_t tt_size;
static uint64_t nodes;
static double deadline;
static jmp_buf abort_jump;

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
    nodes++;
    if (!(nodes & 4095) && now() > deadline) longjmp(abort_jump, 1);
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
    uint64_t key = cur + mask;
    uint64_t slot = key % tt_size;
    if (tt_keys[slot] == key) {
        int e = tt_vals[slot];
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
    uint64_t opp = cur ^ mask;
    uint64_t list[W];
    int n = sorted_moves(cur, mask, possible, list);
    for (int i = 0; i < n; i++) {
        int score = -negamax(opp, mask | list[i], moves + 1, -beta, -alpha);
        if (score >= beta) {
            tt_keys[slot] = key;
            tt_vals[slot] = (int16_t)(score + LOWER);
            return score;
        }
        if (score > alpha) alpha = score;
    }
    tt_keys[slot] = key;
    tt_vals[slot] = (int16_t)alpha;
    return alpha;
}

/* ---- the API (ctypes) ---------------------------------------------------- */

int cx_init(uint64_t entries) {
    free(tt_keys);
    free(tt_vals);
    tt_size = entries;
    tt_keys = calloc(entries, sizeof *tt_keys);
    tt_vals = calloc(entries, sizeof *tt_vals);
    return tt_keys && tt_vals ? 0 : -1;
}

void cx_reset(void) {
    for (uint64_t i = 0; i < tt_size; i++) tt_keys[i] = 0;
}

uint64_t cx_nodes(void) { return nodes; }

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

/* The score (Pons' convention; weak: -1/0/1), or -1000 past `seconds`. */
int cx_solve(uint64_t cur, uint64_t mask, int moves, int weak, double seconds) {
    deadline = now() + seconds;
    if (setjmp(abort_jump)) return -1000;
    return solve_inner(cur, mask, moves, weak);
}

/* One window search (the side to move must not be able to win at once). */
int cx_negamax(uint64_t cur, uint64_t mask, int moves, int alpha, int beta, double seconds) {
    deadline = now() + seconds;
    if (setjmp(abort_jump)) return -1000;
    return negamax(cur, mask, moves, alpha, beta);
}

static int column_of(uint64_t move) { return (63 - __builtin_clzll(move)) / H; }

/* Solver.best_move: writes the column and returns the score, or -1000 past `seconds`. */
int cx_best_move(uint64_t cur, uint64_t mask, int moves, int weak, double seconds, int *column) {
    deadline = now() + seconds;
    if (setjmp(abort_jump)) return -1000;
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
    return -2000; /* inconsistent search: never expected */
}
