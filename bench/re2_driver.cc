// bench/re2_driver.cc - a program of ours over RE2 for bench/llvm_hints.sh
// --program=re2: exercises RE2 deterministically, some objects living
// long and idle (cold), others made and freed at once (hot).
//
//	re2-mp SEED ROUNDS HOLD_MS
//   SEED     seeds the generator of patterns and text
//   ROUNDS   how many rounds of short-lived work
//   HOLD_MS  the long-lived objects are kept (and rarely touched) at least
//            this long, so that they come out cold at clang's lifetime
//            threshold (200 s) when it is past that
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "re2/filtered_re2.h"
#include "re2/re2.h"
#include "re2/set.h"

namespace {

struct Rng {
  unsigned long long s;
  explicit Rng(unsigned long long seed) : s(seed * 6364136223846793005ULL + 1442695040888963407ULL) {}
  unsigned next() {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    return (unsigned)(s >> 33);
  }
  unsigned below(unsigned n) { return next() % n; }
};

const char* const kWords[] = {
    "alpha", "beta",  "gamma", "delta", "epsilon", "zeta", "eta",   "theta",
    "iota",  "kappa", "lambda", "mu",   "nu",      "xi",   "omicron", "pi",
    "rho",   "sigma", "tau",   "upsilon", "phi",   "chi",  "psi",   "omega",
    "foo",   "bar",   "baz",   "qux",   "hello",   "world", "regex", "match"};
const int kNWords = sizeof kWords / sizeof kWords[0];

const char* const kClasses[] = {"[a-z]", "[A-Z]", "[0-9]", "\\d", "\\w", "\\s",
                                "[[:alpha:]]", "[^aeiou ]", "\\pL", "[a-f0-9]",
                                "\\p{Greek}", "."};
const int kNClasses = sizeof kClasses / sizeof kClasses[0];

const char* const kReps[] = {"*", "+", "?", "{2}", "{1,3}", "{0,5}", "*?", "+?", "{2,}"};
const int kNReps = sizeof kReps / sizeof kReps[0];

std::string Word(Rng& r) { return kWords[r.below(kNWords)]; }

// A random pattern, built recursively.
std::string Atom(Rng& r, int depth);
std::string Seq(Rng& r, int depth) {
  std::string s;
  int n = 1 + r.below(3);
  for (int i = 0; i < n; i++) s += Atom(r, depth);
  return s;
}
std::string Atom(Rng& r, int depth) {
  unsigned k = depth > 2 ? r.below(3) : r.below(8);
  std::string a;
  switch (k) {
    case 0: a = Word(r); break;
    case 1: a = kClasses[r.below(kNClasses)]; break;
    case 2: a = std::string(1, (char)('a' + r.below(26))); break;
    case 3: a = "(" + Seq(r, depth + 1) + ")"; break;
    case 4: a = "(?:" + Seq(r, depth + 1) + "|" + Seq(r, depth + 1) + ")"; break;
    case 5: {
      a = "(";
      int n = 2 + r.below(6);
      for (int i = 0; i < n; i++) a += (i ? "|" : "") + Word(r);
      a += ")";
      break;
    }
    case 6: a = "(?i:" + Word(r) + ")"; break;
    default: a = "(?P<n" + std::to_string(depth) + "_" + std::to_string(r.below(1000)) + ">" + Seq(r, depth + 1) + ")"; break;
  }
  if (r.below(3) == 0) a += kReps[r.below(kNReps)];
  return a;
}
std::string Pattern(Rng& r) {
  std::string p = Seq(r, 0);
  if (r.below(5) == 0) p = "^" + p;
  if (r.below(7) == 0) p += "$";
  return p;
}

std::string Text(Rng& r, int nwords) {
  std::string t;
  for (int i = 0; i < nwords; i++) {
    if (i) t += r.below(10) == 0 ? ", " : " ";
    switch (r.below(6)) {
      case 0: t += std::to_string(r.below(100000)); break;
      case 1: { std::string w = Word(r); w[0] = (char)(w[0] - 32); t += w; break; }
      case 2: t += "\xce\xb1\xce\xb2\xce\xb3"; break;  // Greek
      default: t += Word(r); break;
    }
  }
  return t;
}

// Long-lived state: kept for the whole run.
struct Keep {
  std::vector<std::unique_ptr<RE2>> res;
  std::vector<std::string> texts;
  std::unique_ptr<RE2::Set> set;
  std::unique_ptr<re2::FilteredRE2> filt;
  std::vector<std::string> atoms;
  std::map<std::string, int> hist;
};

__attribute__((noinline)) void BuildKeep(Keep& k, Rng& r, int n) {
  RE2::Options opt;
  opt.set_log_errors(false);
  for (int i = 0; i < n; i++) {
    std::unique_ptr<RE2> re(new RE2(Pattern(r), opt));
    if (re->ok()) k.res.push_back(std::move(re));
  }
  for (int i = 0; i < 40; i++) k.texts.push_back(Text(r, 20 + r.below(200)));
  k.set.reset(new RE2::Set(opt, RE2::UNANCHORED));
  for (int i = 0; i < 60; i++) k.set->Add(Pattern(r), nullptr);
  k.set->Compile();
  k.filt.reset(new re2::FilteredRE2(2));
  for (int i = 0; i < 80; i++) {
    int id;
    std::string p;
    for (int j = 0; j < 3; j++) p += (j ? ".*" : "") + Word(r);
    if (r.below(2)) p = "(?i)" + p;
    k.filt->Add(p, opt, &id);
  }
  k.filt->Compile(&k.atoms);
}

__attribute__((noinline)) int UseKeep(Keep& k, Rng& r) {
  int hits = 0;
  const std::string& t = k.texts[r.below(k.texts.size())];
  for (size_t i = 0; i < k.res.size(); i += 1 + r.below(7)) {
    std::string a, b;
    if (k.res[i]->NumberOfCapturingGroups() >= 2) {
      if (RE2::PartialMatch(t, *k.res[i], &a, &b)) hits++;
    } else if (k.res[i]->NumberOfCapturingGroups() == 1) {
      if (RE2::PartialMatch(t, *k.res[i], &a)) hits++;
    } else if (RE2::PartialMatch(t, *k.res[i])) {
      hits++;
    }
  }
  std::vector<int> v;
  k.set->Match(t, &v);
  hits += v.size();
  // FilteredRE2: matched atoms by hand.
  std::vector<int> matched_atoms;
  for (size_t i = 0; i < k.atoms.size(); i++)
    if (t.find(k.atoms[i]) != std::string::npos) matched_atoms.push_back((int)i);
  std::vector<int> all;
  k.filt->AllMatches(t, matched_atoms, &all);
  hits += all.size();
  k.hist[t.substr(0, 5)] += hits;
  return hits;
}

// Compiled, matched once, then left idle: "dormant" lives to the end of
// the run (cold at any lifetime threshold the run outlasts), "medium" is
// freed once the work is done (cold only at a short threshold).
struct Idle {
  std::vector<std::unique_ptr<RE2>> res;
  std::vector<std::string> blobs;
};
__attribute__((noinline)) void MatchOnce(Idle& d, Rng& r, const std::string& pat) {
  RE2::Options opt;
  opt.set_log_errors(false);
  std::unique_ptr<RE2> re(new RE2(pat, opt));
  if (!re->ok()) return;
  std::string t = Text(r, 50);
  RE2::PartialMatch(t, *re);
  d.res.push_back(std::move(re));
}
__attribute__((noinline)) void BuildDormant(Idle& d, Rng& r, int n) {
  for (int i = 0; i < n; i++) MatchOnce(d, r, Pattern(r));
  for (int i = 0; i < n; i++) d.blobs.push_back(Text(r, 100 + r.below(400)));
}
__attribute__((noinline)) void BuildMedium(Idle& d, Rng& r, int n) {
  for (int i = 0; i < n; i++) MatchOnce(d, r, "(?i)" + Pattern(r));
  for (int i = 0; i < n; i++) d.blobs.push_back(std::string(1000 + r.below(5000), 'x'));
}

// Short-lived work: compiled, used and freed at once.
__attribute__((noinline)) int Churn(Rng& r) {
  int hits = 0;
  RE2::Options opt;
  opt.set_log_errors(false);
  if (r.below(4) == 0) opt.set_case_sensitive(false);
  std::string text = Text(r, 30 + r.below(100));
  for (int i = 0; i < 20; i++) {
    RE2 re(Pattern(r), opt);
    if (!re.ok()) continue;
    re2::StringPiece in(text), m;
    std::string s = text;
    switch (r.below(5)) {
      case 0: hits += RE2::GlobalReplace(&s, re, "<\\0>"); break;
      case 1: {
        std::string out;
        if (RE2::Extract(text, re, "[\\0]", &out)) hits += out.size();
        break;
      }
      case 2: {
        std::string c;
        RE2 cap("(" + Word(r) + ")\\s+(\\w+)");
        while (RE2::FindAndConsume(&in, cap, &c)) hits++;
        break;
      }
      case 3: {
        int n = re.NumberOfCapturingGroups() + 1;
        std::vector<re2::StringPiece> sub(n);
        size_t pos = 0;
        while (pos <= text.size() &&
               re.Match(text, pos, text.size(), RE2::UNANCHORED, sub.data(), n)) {
          hits++;
          pos = sub[0].end() - text.data() + (sub[0].empty() ? 1 : 0);
        }
        break;
      }
      default: {
        std::string word;
        int num;
        if (RE2::PartialMatch(text, "(\\w+) (\\d+)", &word, &num)) hits += num % 7;
        hits += RE2::FullMatch(text, re);
        break;
      }
    }
  }
  // A throwaway Set.
  RE2::Set set(opt, RE2::UNANCHORED);
  for (int i = 0; i < 10; i++) set.Add(Word(r) + "\\w*", nullptr);
  if (set.Compile()) {
    std::vector<int> v;
    set.Match(text, &v);
    hits += v.size();
  }
  RE2 quoted(RE2::QuoteMeta(Word(r) + ".*+?" + Word(r)));
  hits += RE2::PartialMatch(text, quoted);
  return hits;
}

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

int main(int argc, char** argv) {
  unsigned seed = argc > 1 ? atoi(argv[1]) : 1;
  int rounds = argc > 2 ? atoi(argv[2]) : 200;
  int hold_ms = argc > 3 ? atoi(argv[3]) : 2000;
  Rng r(seed);
  std::unique_ptr<Keep> k(new Keep);
  BuildKeep(*k, r, 150 + r.below(100));
  std::unique_ptr<Idle> dormant(new Idle), medium(new Idle);
  BuildDormant(*dormant, r, 100);
  BuildMedium(*medium, r, 100);
  double t0 = Now();
  long hits = 0;
  int i = 0;
  for (; i < rounds; i++) {
    hits += Churn(r);
    if (i % 25 == 0) hits += UseKeep(*k, r);
  }
  medium.reset();
  // Keep the long-lived objects idle until HOLD_MS has passed: the work
  // done is the same whatever the machine's speed.
  double left = hold_ms / 1000.0 - (Now() - t0);
  if (left > 0) std::this_thread::sleep_for(std::chrono::duration<double>(left));
  hits += UseKeep(*k, r);
  printf("seed %u rounds %d regexes %zu dormant %zu hits %ld\n", seed, i, k->res.size(), dormant->res.size(), hits);
  return 0;
}
