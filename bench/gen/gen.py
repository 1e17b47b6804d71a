#!/usr/bin/env python3
"""gen.py - generate, build and run a MemProf workload for the benchmarks.

    bench/gen/gen.py [--preset merge|sym] [--runs N] [--work DIR] [options]

Writes a C program of many functions spread over source files in nested
directories (DIR/<preset>/src/<dir>/<dir>/.../fileNNN.c, named /workload/...
in DWARF), builds it with clang-19 -fmemory-profile (DIR/<preset>/workload,
a PIE with a build id), and runs it N times with seeds 1..N (two at a time,
MEMPROF_OPTIONS=log_path=...), leaving one raw profile per run in
DIR/<preset>/profiles/NNN.profraw.  Prints a JSON summary on stdout.  A manifest.json next to
them records the parameters, the build command, and per-profile facts read
from the raw headers (contexts, bytes); the generator reuses what is there
when the parameters and this script have not changed.

The program.  Functions sit in LAYERS layers.  Layer 0 functions allocate:
each has ALLOC_SITES allocation sites (malloc, calloc, realloc, strdup;
sizes from 8 bytes to 64 KiB, some fixed, some drawn at run time), most
through static inline helpers, so that symbolization meets inline frames.
Objects are written and read (access counts) and freed when a ring of 256
later objects displaces them, half of the ring left live at exit (lifetimes).  A function of
layer k > 0 has FANOUT call sites, each calling a function of layer k-1
chosen at generation time, some of them in a loop, some through a static
inline wrapper, and sometimes one allocation of its own (shorter contexts).
main() visits root functions (the top layer).  Which call sites are taken
depends on a pseudo-random generator seeded from argv[1] (or $WL_SEED): each
site has a fixed probability, high for "hot" sites, low for cold ones, so
runs with different seeds share a core of contexts and differ in the rest,
and the number of roots visited varies from run to run (log-normal), like
the per-invocation context counts of the clang bootstrap in the MemProf
binary format RFC (940 to 35k contexts, median 10.7k).

Presets:
  merge  a DAG (each function has about FANOUT callers): many contexts over
         few call sites; about 10k contexts per run (median), deep stacks
  sym    a tree (each function has one caller) of many small functions
         visited almost entirely in one run: >= 20k distinct PCs, to time
         symbolization

Python 3 standard library only.
"""

import argparse
import concurrent.futures
import hashlib
import json
import os
import random
import shutil
import statistics
import struct
import subprocess
import sys

CLANG = os.environ.get("CLANG", "clang-19")
CFLAGS = ["-fmemory-profile", "-g", "-O1", "-fno-omit-frame-pointer",
          "-fno-optimize-sibling-calls", "-mno-omit-leaf-frame-pointer"]
LDFLAGS = ["-fmemory-profile", "-Wl,--build-id"]

PRESETS = {
    # Seeds 1..64: 2.2k / 12.2k / 34.8k contexts per run (min, median,
    # max); the union of 8 runs is 46k contexts, of 64 runs 98k.
    "merge": dict(functions=3000, roots=40, files=160, layers=9, fanout=3,
                  alloc_sites=3, tree=False, hot_frac=0.7, hot_p=0.98,
                  cold_lo=0.0, cold_hi=0.03, loop_frac=0.15,
                  roots_median=16.0, roots_sigma=0.8, roots_min=1,
                  roots_max=80, core_roots=0.05, skew=2.5),
    # One run touches nearly every call site: 18k contexts, 23.8k PCs.
    "sym": dict(functions=6500, roots=0, files=200, layers=4, fanout=3,
                alloc_sites=4, tree=True, hot_frac=1.0, hot_p=0.97,
                cold_lo=0.9, cold_hi=0.9, loop_frac=0.0,
                roots_median=0.0, roots_sigma=0.0, roots_min=0, roots_max=0,
                core_roots=1.0, skew=1.0),
}

DIRS = ["core", "sema", "codegen", "support", "parse", "lex", "ir",
        "analysis", "driver", "frontend", "serialization", "ast"]

MAGIC = 0xFF6D70726F667281


def log(msg):
    print("gen: " + msg, file=sys.stderr, flush=True)


# ------------------------------------------------------------ the program

class Site:
    """One call or allocation site in a function body."""
    def __init__(self, kind, p, target=None, size=None, loop=False,
                 via_inline=False):
        self.kind = kind          # "call" or an allocation kind
        self.p = p                # probability the site is taken
        self.target = target      # callee name (calls)
        self.size = size          # bytes, or None: drawn at run time
        self.loop = loop
        self.via_inline = via_inline


def layer_sizes(P):
    """Functions per layer, leaf layer first, summing to P['functions']."""
    n, L = P["functions"], P["layers"]
    if P["tree"]:
        g = P["fanout"]         # each function has exactly one caller
        w = [g ** (L - 1 - k) for k in range(L)]
        s = sum(w)
        sizes = [max(1, int(round(n * x / s))) for x in w]
    else:
        # ROOTS on top, the rest shrinking slowly towards the top.
        w = [1.0 + 0.15 * (L - 2 - k) for k in range(L - 1)]
        s = sum(w)
        sizes = [max(1, int(round((n - P["roots"]) * x / s))) for x in w]
        sizes.append(P["roots"])
    sizes[0] += n - sum(sizes)
    return sizes


def make_graph(P, rng):
    sizes = layer_sizes(P)
    L = P["layers"]
    names = [["f%d_%d" % (k, i) for i in range(sizes[k])] for k in range(L)]

    def prob():
        if rng.random() < P["hot_frac"]:
            return P["hot_p"]
        return rng.uniform(P["cold_lo"], P["cold_hi"])

    def alloc_site():
        kind = rng.choice(["malloc", "malloc", "malloc", "calloc",
                           "realloc", "string"])
        size = None if rng.random() < 0.3 else \
            int(2 ** rng.uniform(3, 16)) // 8 * 8 + 8
        return Site(kind, prob(), size=size,
                    via_inline=kind != "string" and rng.random() < 0.6)

    funcs = {}
    for k in range(L):
        for i, name in enumerate(names[k]):
            sites = []
            if k == 0:
                sites = [alloc_site() for _ in range(P["alloc_sites"])]
            else:
                below = names[k - 1]
                for j in range(P["fanout"]):
                    if P["tree"]:
                        t = below[(i * P["fanout"] + j) % len(below)]
                    elif j == 0:
                        # Every function of the layer below gets a caller.
                        t = below[i % len(below)] if i < len(below) \
                            else rng.choice(below)
                    else:
                        t = rng.choice(below)
                    sites.append(Site("call", prob(), target=t,
                                      loop=rng.random() < P["loop_frac"],
                                      via_inline=rng.random() < 0.25))
                if not P["tree"] and rng.random() < 0.3:
                    sites.append(alloc_site())
            funcs[name] = (k, sites)
    # The tree preset must reach every function of the layer below.
    if P["tree"]:
        for k in range(1, L):
            called = {s.target for n in names[k] for s in funcs[n][1]}
            missing = [n for n in names[k - 1] if n not in called]
            for n, m in zip(names[k], missing):
                funcs[n][1].append(Site("call", P["hot_p"], target=m))
    return names, funcs


def file_paths(P, rng):
    """FILES paths, 2 to 4 distinct directories deep (lib/sema/ast/...)."""
    return [os.path.join(*rng.sample(DIRS, 2 + i % 3), "file%03d.c" % i)
            for i in range(P["files"])]


HEADER = r"""/* wl.h - generated by bench/gen/gen.py; do not edit. */
#ifndef WL_H
#define WL_H
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define WL_NOINLINE __attribute__((noinline))

extern uint64_t wl_state;

/* xorshift64*: the run's only source of choices. */
static inline uint32_t wl_rand(void)
{
	uint64_t x = wl_state;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	wl_state = x;
	return (uint32_t)((x * 0x2545F4914F6CDD1DULL) >> 32);
}

/* True with probability T / 2^32. */
static inline int wl_take(uint32_t t)
{
	return wl_rand() < t;
}

static inline unsigned wl_loop(void)
{
	return 1 + wl_rand() % 3;
}

/* Keep P alive a while: frees the object it displaces in a ring. */
void wl_keep(void *p);

/* Writes and reads some of the object so that access counts vary. */
static inline void *wl_touch(void *p, size_t n)
{
	if (p) {
		memset(p, (int)n, n < 512 ? n : 512);
		((volatile char *)p)[n - 1] += ((char *)p)[0];
	}
	return p;
}

static inline size_t wl_size(size_t fixed)
{
	return fixed ? fixed : 8 + (wl_rand() & 4095);
}
#endif
"""

MAIN = r"""/* main.c - generated by bench/gen/gen.py; do not edit. */
#include <math.h>
#include <stdio.h>
#include "wl.h"

uint64_t wl_state;

#define RING 256
static void *ring[RING];
static unsigned ring_pos;

void wl_keep(void *p)
{
	unsigned i = ring_pos++ %% RING;

	free(ring[i]);
	ring[i] = p;
}

typedef void (*root_fn)(void);
%(decls)s
static const root_fn roots[] = {
%(table)s
};
#define NROOTS (sizeof roots / sizeof roots[0])
#define NCORE %(ncore)d

int main(int argc, char **argv)
{
	const char *s = argc > 1 ? argv[1] : getenv("WL_SEED");
	uint64_t seed = s ? strtoull(s, NULL, 0) : 1;
	double u1, u2, z;
	long visits;

	/* splitmix64 of the seed: nearby seeds give unrelated streams. */
	seed += 0x9E3779B97F4A7C15ULL;
	seed = (seed ^ (seed >> 30)) * 0xBF58476D1CE4E5B9ULL;
	seed = (seed ^ (seed >> 27)) * 0x94D049BB133111EBULL;
	wl_state = (seed ^ (seed >> 31)) | 1;

	/* Core roots run every time: the contexts all runs share. */
	for (unsigned i = 0; i < NCORE; i++)
		roots[i]();
	/* Then a log-normal number of visits to other roots, the first ones
	 * more often (u^SKEW): popular roots are shared between runs. */
	u1 = (wl_rand() + 1.0) / 4294967297.0;
	u2 = wl_rand() / 4294967296.0;
	z = sqrt(-2 * log(u1)) * cos(6.283185307179586 * u2);
	visits = lround(%(rmed)f * exp(%(rsigma)f * z));
	if (visits < %(rmin)d)
		visits = %(rmin)d;
	if (visits > %(rmax)d)
		visits = %(rmax)d;
	for (long v = 0; v < visits && NROOTS > NCORE; v++) {
		double u = pow(wl_rand() / 4294967296.0, %(skew)f);
		roots[NCORE + (size_t)(u * (NROOTS - NCORE))]();
	}
	/* Leave the ring's objects live at exit: some contexts die late. */
	for (unsigned i = 0; i < RING / 2; i++) {
		free(ring[i]);
		ring[i] = NULL;
	}
	return 0;
}
"""


def thresh(p):
    return min(0xFFFFFFFF, int(p * 4294967296.0))


def emit_site(s, out):
    t = "0x%08xU" % thresh(s.p)
    if s.kind == "call":
        call = ("wl_via_%s();" % s.target) if s.via_inline else \
            ("%s();" % s.target)
        if s.loop:
            out.append("\tif (wl_take(%s))" % t)
            out.append("\t\tfor (unsigned i = 0, n = wl_loop(); i < n; i++)")
            out.append("\t\t\t%s" % call)
        else:
            out.append("\tif (wl_take(%s))" % t)
            out.append("\t\t%s" % call)
        return
    size = "wl_size(%d)" % (s.size or 0)
    if s.kind == "malloc":
        out.append("\tif (wl_take(%s)) {" % t)
        out.append("\t\tsize_t n = %s;" % size)
        e = "wl_obj(n)" if s.via_inline else "wl_touch(malloc(n), n)"
        out.append("\t\twl_keep(%s);" % e)
        out.append("\t}")
    elif s.kind == "calloc":
        out.append("\tif (wl_take(%s)) {" % t)
        out.append("\t\tsize_t n = %s;" % size)
        e = "wl_arr(n / 8 + 1, 8)" if s.via_inline else \
            "wl_touch(calloc(n / 8 + 1, 8), n / 8 * 8 + 8)"
        out.append("\t\twl_keep(%s);" % e)
        out.append("\t}")
    elif s.kind == "realloc":
        out.append("\tif (wl_take(%s)) {" % t)
        out.append("\t\tsize_t n = %s;" % size)
        if s.via_inline:
            out.append("\t\twl_keep(wl_grow(n));")
        else:
            out.append("\t\tvoid *p = malloc(16);")
            out.append("\t\tvoid *q = realloc(p, n);")
            out.append("\t\twl_keep(wl_touch(q ? q : p, q ? n : 16));")
        out.append("\t}")
    elif s.kind == "string":
        out.append("\tif (wl_take(%s))" % t)
        out.append("\t\twl_keep(strdup(wl_name + (wl_rand() & 15)));")


FILE_HELPERS = r"""
static const char wl_name[] = "generated/workload/name/%(file)s";

/* Static inline helpers: inlined, so they appear as inline frames. */
static inline void *wl_obj(size_t n)
{
	return wl_touch(malloc(n), n);
}

static inline void *wl_arr(size_t n, size_t m)
{
	return wl_touch(calloc(n, m), n * m);
}

static inline void *wl_grow(size_t n)
{
	void *p = wl_obj(32);
	void *q = realloc(p, n);

	return q ? wl_touch(q, n) : p;
}
"""


def write_sources(P, srcdir, rng):
    names, funcs = make_graph(P, rng)
    L = P["layers"]
    paths = file_paths(P, rng)
    # Functions go to files round-robin in a shuffled order: each file holds
    # functions of several layers, and callees are mostly in other files.
    order = [n for layer in names for n in layer]
    rng.shuffle(order)
    per_file = [[] for _ in paths]
    for i, n in enumerate(order):
        per_file[i % len(paths)].append(n)
    if os.path.isdir(srcdir):
        shutil.rmtree(srcdir)
    os.makedirs(srcdir)
    with open(os.path.join(srcdir, "wl.h"), "w") as f:
        f.write(HEADER)
    sources = []
    for path, fnames in zip(paths, per_file):
        out = ["/* %s - generated by bench/gen/gen.py; do not edit. */" %
               path, '#include "wl.h"',
               FILE_HELPERS % {"file": os.path.basename(path)}]
        callees = sorted({s.target for n in fnames for s in funcs[n][1]
                          if s.kind == "call"})
        for c in callees:
            out.append("void %s(void);" % c)
        for c in sorted({s.target for n in fnames for s in funcs[n][1]
                         if s.kind == "call" and s.via_inline}):
            out.append("static inline void wl_via_%s(void)\n{\n\t%s();\n}"
                       % (c, c))
        for n in fnames:
            k, sites = funcs[n]
            out.append("")
            out.append("WL_NOINLINE void %s(void)\n{" % n)
            for s in sites:
                emit_site(s, out)
            out.append("}")
        full = os.path.join(srcdir, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w") as f:
            f.write("\n".join(out) + "\n")
        sources.append(path)
    roots = names[L - 1]
    ncore = max(1, int(len(roots) * P["core_roots"]))
    main = MAIN % {
        "decls": "\n".join("void %s(void);" % r for r in roots),
        "table": "\n".join("\t%s," % r for r in roots),
        "ncore": ncore, "rmed": P["roots_median"],
        "rsigma": P["roots_sigma"], "rmin": P["roots_min"],
        "rmax": P["roots_max"], "skew": P["skew"]}
    with open(os.path.join(srcdir, "main.c"), "w") as f:
        f.write(main)
    sources.append("main.c")
    return sources


def build(srcdir, objdir, binpath, sources, jobs):
    if os.path.isdir(objdir):
        shutil.rmtree(objdir)

    def cc(src):
        obj = os.path.join(objdir, src[:-2] + ".o")
        os.makedirs(os.path.dirname(obj), exist_ok=True)
        # DWARF names /workload/<dirs>/fileNNN.c wherever DIR is.
        subprocess.run([CLANG] + CFLAGS + [
            "-fdebug-prefix-map=%s=/workload" % os.path.abspath(srcdir),
            "-I.", "-c", src, "-o", obj], cwd=srcdir, check=True)
        return obj

    with concurrent.futures.ThreadPoolExecutor(jobs) as ex:
        objs = list(ex.map(cc, sources))
    subprocess.run([CLANG] + LDFLAGS + ["-o", binpath] + objs + ["-lm"],
                   check=True)


# ------------------------------------------------------------ raw profiles

def raw_facts(path):
    """Contexts (MIB records) and bytes of each profile in a raw file."""
    with open(path, "rb") as f:
        data = f.read()
    contexts, off = 0, 0
    while off + 48 <= len(data):
        magic, _ver, total, _seg, mib, _stk = struct.unpack_from(
            "<6Q", data, off)
        if magic != MAGIC or total == 0:
            raise ValueError("%s: not a raw MemProf profile" % path)
        contexts += struct.unpack_from("<Q", data, off + mib)[0]
        off += total
    return {"contexts": contexts, "bytes": len(data)}


def run_one(binpath, profdir, seed):
    prefix = os.path.join(profdir, "tmp-%03d" % seed)
    env = dict(os.environ, MEMPROF_OPTIONS="log_path=" + prefix)
    env.pop("WL_SEED", None)
    p = subprocess.run([binpath, str(seed)], env=env)
    if p.returncode != 0:
        raise RuntimeError("workload seed %d exited %d" % (seed, p.returncode))
    made = [f for f in os.listdir(profdir)
            if f.startswith("tmp-%03d." % seed)]
    if len(made) != 1:
        raise RuntimeError("seed %d wrote %d profiles" % (seed, len(made)))
    dst = os.path.join(profdir, "%03d.profraw" % seed)
    os.replace(os.path.join(profdir, made[0]), dst)
    return raw_facts(dst)


def summarize(facts):
    c = [f["contexts"] for f in facts]
    b = [f["bytes"] for f in facts]
    return {"profiles": len(c),
            "contexts_min": min(c), "contexts_median": statistics.median(c),
            "contexts_max": max(c),
            "bytes_min": min(b), "bytes_median": statistics.median(b),
            "bytes_max": max(b)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--preset", choices=sorted(PRESETS), default="merge")
    ap.add_argument("--runs", type=int, default=64,
                    help="profiles to have (seeds 1..RUNS)")
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--work", default=os.path.join(here, "..", "work"),
                    help="scratch directory (default bench/work)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--seed", type=int, default=20211,
                    help="generation seed (the program's shape)")
    for k, v in PRESETS["merge"].items():
        if not isinstance(v, bool):
            ap.add_argument("--" + k.replace("_", "-"), type=type(v),
                            default=None, help="override the preset")
    a = ap.parse_args()

    P = dict(PRESETS[a.preset])
    for k in list(P):
        v = getattr(a, k, None)
        if v is not None:
            P[k] = v
    P["gen_seed"] = a.seed
    with open(os.path.abspath(__file__), "rb") as f:
        gen_hash = hashlib.sha256(f.read()).hexdigest()[:16]
    key = {"params": P, "generator": gen_hash,
           "cc": [CLANG] + CFLAGS, "ld": [CLANG] + LDFLAGS}

    top = os.path.abspath(os.path.join(a.work, a.preset))
    os.makedirs(top, exist_ok=True)
    man_path = os.path.join(top, "manifest.json")
    binpath = os.path.join(top, "workload")
    profdir = os.path.join(top, "profiles")
    man = None
    if os.path.exists(man_path):
        with open(man_path) as f:
            man = json.load(f)
        if man.get("key") != key or not os.path.exists(binpath):
            man = None
    if man is None:
        log("%s: generating %d functions in %d files" %
            (a.preset, P["functions"], P["files"]))
        sources = write_sources(P, os.path.join(top, "src"),
                                random.Random(a.seed))
        log("%s: building with %s (%d jobs)" % (a.preset, CLANG, a.jobs))
        build(os.path.join(top, "src"), os.path.join(top, "obj"), binpath,
              sources, a.jobs)
        if os.path.isdir(profdir):
            shutil.rmtree(profdir)
        man = {"key": key, "binary": binpath, "facts": {}}
    os.makedirs(profdir, exist_ok=True)
    for f in os.listdir(profdir):
        if f.startswith("tmp-"):
            os.remove(os.path.join(profdir, f))
    facts = man["facts"]
    todo = [s for s in range(1, a.runs + 1)
            if str(s) not in facts or not os.path.exists(
                os.path.join(profdir, "%03d.profraw" % s))]
    if todo:
        log("%s: running %d seeds" % (a.preset, len(todo)))
    with concurrent.futures.ThreadPoolExecutor(a.jobs) as ex:
        for s, fx in zip(todo, ex.map(lambda s: run_one(binpath, profdir, s),
                                      todo)):
            facts[str(s)] = fx
    man["summary"] = summarize([facts[str(s)] for s in range(1, a.runs + 1)])
    with open(man_path + ".tmp", "w") as f:
        json.dump(man, f, indent=1, sort_keys=True)
    os.replace(man_path + ".tmp", man_path)
    print(json.dumps({"binary": binpath, "profile_dir": profdir,
                      **man["summary"]}, sort_keys=True))


if __name__ == "__main__":
    main()
