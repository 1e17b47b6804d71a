/*
 * exp_flame.c - flame graphs: a profile's contexts folded into a tree of
 * frames, written as one self-contained interactive SVG (export.h).
 *
 * The tree: node 0 is "all"; a context adds its frames outermost first,
 * each the child named like it of the node before, and its value (the
 * chosen MIB field) to every node on the way.  Children are keyed by
 * (parent, interned name) in a hash map, so a frame costs one lookup.
 * A differential graph adds a second profile's contexts to the same tree
 * on the other side: widths come from the test side, colours from the
 * change.
 *
 * The SVG: one <g> per drawn frame (a frame narrower than a tenth of a
 * pixel is not drawn, nor is anything above it), each with a <title>
 * (the tooltip: name and figures), a <rect> and a <text> already cut to
 * fit, so that the file reads as a picture without its script too.  The
 * script (no network, no external file) shows a frame's figures on hover,
 * zooms on click, and searches by regular expression; the address's
 * fragment "#s=REGEX" searches and "#z=REGEX" zooms to the widest match
 * when the file opens.  Children are laid out in name order and every
 * figure is an integer sum, so the bytes depend only on the contexts,
 * not on the order they came in.
 */
#include "export.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/mp_util.h"
#include "exp_intern.h"
#include "profile/compare.h"
#include "profile/view.h"

enum { SIDE_TEST = EXP_FLAME_TEST, SIDE_BASE = EXP_FLAME_BASE };

struct exp_flame_node {
	uint32_t name;			/* in names.text */
	uint32_t parent;
	uint32_t depth;
	uint32_t first_child, next_sibling;	/* after layout; 0: none */
	uint64_t value[2];		/* per side, inclusive */
	uint64_t by_class[3];		/* the test side's, per cmp_class */
};

struct exp_flame {
	struct exp_flame_opts o;
	struct exp_names names;
	struct exp_flame_node *nodes;
	size_t n, alloc;
	struct ht_map children;		/* ht_pair_key(parent, name) -> node */
	bool has_base;
};

/* Geometry, in pixels. */
#define ROW 17			/* one frame's row */
#define PAD 10			/* left and right margins */
#define TOP 64			/* title, subtitle, buttons */
#define BOTTOM 34		/* the details line */
#define FONT 12
#define CHAR_W (0.59 * FONT)	/* an average character of Verdana */
#define MIN_W 0.1		/* narrower frames are not drawn */
#define STR_(x) #x
#define STR(x) STR_(x)

static enum mp_errcode add_node(struct exp_flame *f, uint32_t parent,
				uint32_t name, uint32_t *id)
{
	bool added;
	uint32_t *slot;

	if (f->n >= UINT32_MAX - 1)
		return MP_E_TOO_LARGE;
	slot = ht_map_find_or_add(&f->children, ht_pair_key(parent, name), &added);
	if (!slot)
		return MP_E_NOMEM;
	if (!added) {
		*id = *slot;
		return MP_OK;
	}
	if (!MP_GROW(f->nodes, f->alloc, f->n + 1))
		return MP_E_NOMEM;
	memset(&f->nodes[f->n], 0, sizeof(f->nodes[0]));
	f->nodes[f->n].name = name;
	f->nodes[f->n].parent = parent;
	f->nodes[f->n].depth = f->nodes[parent].depth + 1;
	*slot = *id = (uint32_t)f->n++;
	return MP_OK;
}

/* S's number; by content when S is a string of the caller's own
 * (FRESH: freed after), else by address. */
static uint32_t intern_name(struct exp_flame *f, const char *s, bool fresh,
			    bool *oom)
{
	bool added;
	int64_t id = fresh ? exp_intern(&f->names.text, s, strlen(s), &added)
			   : exp_name_id(&f->names, s, &added);

	*oom = id < 0;
	return id < 0 ? 0 : (uint32_t)id;
}

struct exp_flame *exp_flame_new(const struct exp_flame_opts *o)
{
	struct exp_flame *f = calloc(1, sizeof(*f));
	bool oom;

	if (!f)
		return NULL;
	f->o = *o;
	if (!MP_GROW(f->nodes, f->alloc, 1)) {
		free(f);
		return NULL;
	}
	memset(&f->nodes[0], 0, sizeof(f->nodes[0]));
	f->nodes[0].name = intern_name(f, "all", false, &oom);
	f->n = 1;
	if (oom) {
		exp_flame_free(f);
		return NULL;
	}
	return f;
}

void exp_flame_free(struct exp_flame *f)
{
	if (!f)
		return;
	exp_names_release(&f->names);
	ht_map_release(&f->children);
	free(f->nodes);
	free(f);
}

static void add_sat(uint64_t *a, uint64_t b)
{
	*a = *a > UINT64_MAX - b ? UINT64_MAX : *a + b;
}

/* Add context C of value VALUE on SIDE: every frame, outermost first. */
static enum mp_errcode add_context(struct exp_flame *f,
				   const struct view_context *c, int side,
				   struct mp_err *err)
{
	uint64_t value = c->mib.v[f->o.value];
	enum mib_type k = mib_alloc_type(&c->mib, &f->o.thresholds);
	uint32_t node = 0;
	enum mp_errcode rc;

	if (!value)
		return MP_OK;
	add_sat(&f->nodes[0].value[side], value);
	if (side == SIDE_TEST)
		add_sat(&f->nodes[0].by_class[k], value);
	for (uint32_t i = c->nframes; i-- > 0;) {
		char *tofree;
		const char *name = exp_frame_name(f->o.dm, &c->frames[i], &tofree);
		uint32_t id = 0;
		bool oom = !name;

		if (name)
			id = intern_name(f, name, tofree != NULL, &oom);
		free(tofree);
		if (oom)
			return mp_fail(err, MP_E_NOMEM, NULL);
		if ((rc = add_node(f, node, id, &node)))
			return mp_fail(err, rc, rc == MP_E_TOO_LARGE
				       ? "more than 2^32 flame graph frames" : NULL);
		add_sat(&f->nodes[node].value[side], value);
		if (side == SIDE_TEST)
			add_sat(&f->nodes[node].by_class[k], value);
	}
	return MP_OK;
}

enum mp_errcode exp_flame_add_view(struct exp_flame *f, struct view *v,
				   int side, struct mp_err *err)
{
	enum mp_errcode rc;

	if (side == SIDE_BASE)
		f->has_base = true;
	for (size_t i = 0; i < v->ncontexts; i++) {
		if ((rc = view_frames(v, &v->contexts[i], err)) ||
		    (rc = add_context(f, &v->contexts[i], side, err)))
			return rc;
	}
	return MP_OK;
}

/* ---- layout ---- */

static int by_parent_name(const void *a, const void *b, void *arg)
{
	const struct exp_flame *f = arg;
	const struct exp_flame_node *x = &f->nodes[*(const uint32_t *)a];
	const struct exp_flame_node *y = &f->nodes[*(const uint32_t *)b];

	if (x->parent != y->parent)
		return x->parent < y->parent ? -1 : 1;
	return strcmp(f->names.text.keys[x->name], f->names.text.keys[y->name]);
}

/* Link every node's children in name order. */
static enum mp_errcode link_children(struct exp_flame *f)
{
	uint32_t *order;

	if (f->n < 2)
		return MP_OK;
	order = malloc((f->n - 1) * sizeof(*order));
	if (!order)
		return MP_E_NOMEM;
	for (size_t i = 1; i < f->n; i++)
		order[i - 1] = (uint32_t)i;
	qsort_r(order, f->n - 1, sizeof(*order), by_parent_name, f);
	/* Backwards, so that each node is pushed in front of its siblings. */
	for (size_t i = f->n - 1; i-- > 0;) {
		struct exp_flame_node *c = &f->nodes[order[i]];

		c->next_sibling = f->nodes[c->parent].first_child;
		f->nodes[c->parent].first_child = order[i];
	}
	free(order);
	return MP_OK;
}

/* ---- writing ---- */

struct writer {
	FILE *out;
	const struct exp_flame *f;
	const struct exp_flame_opts *o;
	double scale;			/* pixels per unit of value */
	unsigned height;
	const char *unit;
};

/*
 * The code point at S and its length in *N: an invalid sequence is one
 * byte of U+FFFD.
 */
static uint32_t utf8_next(const unsigned char *s, size_t *n)
{
	uint32_t cp;

	*n = mp_utf8_len(s, &cp);
	if (!*n) {
		*n = 1;
		return 0xfffd;
	}
	return cp;
}

/*
 * A code point XML cannot carry or a reader should not be shown (C0,
 * DEL, mp_unicode_hidden()'s, the two noncharacters): written as '?'.
 */
static bool unprintable(uint32_t cp)
{
	return cp < 0x20 || cp == 0x7f || mp_unicode_hidden(cp) ||
	       cp == 0xfffe || cp == 0xffff;
}

/* How many characters S has. */
static size_t utf8_chars(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t len = strlen(s), chars = 0, n;

	for (size_t i = 0; i < len; i += n, chars++)
		utf8_next(p + i, &n);
	return chars;
}

/* S as XML character data, at most MAX characters of it. */
static void put_text(FILE *out, const char *s, size_t max)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t len = strlen(s), n;

	for (size_t i = 0, chars = 0; i < len && chars < max; i += n, chars++) {
		uint32_t cp = utf8_next(p + i, &n);

		switch (cp) {
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '&': fputs("&amp;", out); break;
		case '"': fputs("&quot;", out); break;
		default:
			if (unprintable(cp))
				fputc('?', out);
			else if (cp == 0xfffd && n == 1)
				fputs("&#xfffd;", out);
			else
				fwrite(p + i, 1, n, out);
		}
	}
}

/* V with a comma between groups of three digits. */
static const char *grouped(uint64_t v, char buf[32])
{
	char digits[24];
	int n = snprintf(digits, sizeof(digits), "%" PRIu64, v), o = 0;

	for (int i = 0; i < n; i++) {
		if (i && (n - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = digits[i];
	}
	buf[o] = '\0';
	return buf;
}

static double percent(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

static uint32_t name_hash(const char *s)
{
	uint32_t h = 2166136261u;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

/* The fill of node N. */
static void put_fill(const struct writer *w, const struct exp_flame_node *n)
{
	uint32_t h = name_hash(w->f->names.text.keys[n->name]);

	if (w->f->has_base) {
		/* The relative change, -1 (vanished) to 1 (new). */
		double t = (double)n->value[SIDE_TEST], b = (double)n->value[SIDE_BASE];
		double r = (t - b) / (t > b ? t : b);
		int c = 235 - (int)lround(195 * fabs(r));

		if (t > b)
			fprintf(w->out, "rgb(255,%d,%d)", c, c);
		else if (t < b)
			fprintf(w->out, "rgb(%d,%d,255)", c, c);
		else
			fputs("rgb(235,235,235)", w->out);
		return;
	}
	if (n == &w->f->nodes[0]) {
		fputs("rgb(200,200,200)", w->out);
		return;
	}
	/* The class holding most of the frame's value: hot red, cold blue,
	 * notcold orange; lightness varies so that neighbours differ. */
	enum mib_type k = MIB_NOTCOLD;

	if (n->by_class[MIB_COLD] > n->by_class[k])
		k = MIB_COLD;
	if (n->by_class[MIB_HOT] > n->by_class[k])
		k = MIB_HOT;
	fprintf(w->out, "hsl(%u,%u%%,%u%%)",
		k == MIB_HOT ? h % 16 : k == MIB_COLD ? 200 + h % 30
		: 28 + h % 24, 70 + (h >> 8) % 20, 55 + (h >> 16) % 14);
}

/* The tooltip of node N: its name, then its figures. */
static void put_title(const struct writer *w, const struct exp_flame_node *n)
{
	const struct exp_flame_node *root = &w->f->nodes[0];
	uint64_t t = n->value[SIDE_TEST], b = n->value[SIDE_BASE];
	char g1[32], g2[32];

	fputs("<title>", w->out);
	put_text(w->out, w->f->names.text.keys[n->name], SIZE_MAX);
	if (!w->f->has_base) {
		fprintf(w->out, "\n%s %s (%.2f%%)", grouped(t, g1), w->unit,
			percent(t, root->value[SIDE_TEST]));
		for (int k = 0; k < 3; k++)
			if (n->by_class[k])
				fprintf(w->out, ", %s %.1f%%",
					mib_type_name((enum mib_type)k),
					percent(n->by_class[k], t));
	} else {
		fprintf(w->out, "\ntest %s %s (%.2f%%), base %s", grouped(t, g1),
			w->unit, percent(t, root->value[SIDE_TEST]), grouped(b, g2));
		if (b)
			fprintf(w->out, ", %+.2f%%",
				((double)t - (double)b) * 100.0 / (double)b);
		else
			fputs(", new", w->out);
	}
	fputs("</title>", w->out);
}

static void put_frame(const struct writer *w, const struct exp_flame_node *n,
		      double x, double width)
{
	double y = w->height - BOTTOM - (double)(n->depth + 1) * ROW;
	const char *name = w->f->names.text.keys[n->name];
	size_t fit = width > 6 ? (size_t)((width - 6) / CHAR_W) : 0;

	fprintf(w->out, "<g data-x=\"%.2f\" data-w=\"%.2f\" data-d=\"%u\">",
		x, width, n->depth);
	put_title(w, n);
	fprintf(w->out, "<rect x=\"%.2f\" y=\"%.0f\" width=\"%.2f\" "
		"height=\"%d\" rx=\"2\" fill=\"", x, y, width, ROW - 1);
	put_fill(w, n);
	fprintf(w->out, "\"/><text x=\"%.2f\" y=\"%.0f\">", x + 3, y + ROW - 5);
	if (fit >= 3) {
		size_t chars = utf8_chars(name);

		put_text(w->out, name, chars <= fit ? chars : fit - 2);
		if (chars > fit)
			fputs("..", w->out);
	}
	fputs("</text></g>\n", w->out);
}

/* The script: hover, zoom, search; "#s=REGEX" and "#z=REGEX" on load. */
static const char script[] =
"\"use strict\";\n"
"var W, PAD = " STR(PAD) ", CHAR = " STR(FONT) " * 0.59;\n"
"var frames, details, matched, unzoom_btn, search_btn, searching = null;\n"
"function attr(e, a) { return parseFloat(e.getAttribute(a)); }\n"
"function name_of(g) { return g.children[0].textContent.split(\"\\n\")[0]; }\n"
"function group_of(e) {\n"
"  while (e && e.parentNode !== frames) e = e.parentNode;\n"
"  return e;\n"
"}\n"
"function fit(g) {\n"
"  var r = g.children[1], t = g.children[2], name = name_of(g);\n"
"  var w = attr(r, \"width\"), n = Math.floor((w - 6) / CHAR);\n"
"  t.setAttribute(\"x\", attr(r, \"x\") + 3);\n"
"  t.textContent = n < 3 ? \"\" : name.length <= n ? name\n"
"    : name.substring(0, n - 2) + \"..\";\n"
"}\n"
"function place(g, x, w) {\n"
"  var r = g.children[1];\n"
"  r.setAttribute(\"x\", x.toFixed(2));\n"
"  r.setAttribute(\"width\", w.toFixed(2));\n"
"  g.removeAttribute(\"class\");\n"
"  fit(g);\n"
"}\n"
"function zoom(z) {\n"
"  var x = attr(z, \"data-x\"), w = attr(z, \"data-w\"), d = attr(z, \"data-d\");\n"
"  var k = (W - 2 * PAD) / w, all = frames.children;\n"
"  for (var i = 0; i < all.length; i++) {\n"
"    var g = all[i], gx = attr(g, \"data-x\"), gw = attr(g, \"data-w\");\n"
"    if (attr(g, \"data-d\") < d) {\n"
"      if (gx <= x + 0.01 && gx + gw >= x + w - 0.01) {\n"
"        place(g, PAD, W - 2 * PAD);\n"
"        g.setAttribute(\"class\", \"parent\");\n"
"      } else g.setAttribute(\"class\", \"hide\");\n"
"    } else if (gx >= x - 0.01 && gx + gw <= x + w + 0.01) {\n"
"      place(g, PAD + (gx - x) * k, gw * k);\n"
"    } else g.setAttribute(\"class\", \"hide\");\n"
"  }\n"
"  unzoom_btn.removeAttribute(\"class\");\n"
"}\n"
"function reset_zoom() {\n"
"  var all = frames.children;\n"
"  for (var i = 0; i < all.length; i++)\n"
"    place(all[i], attr(all[i], \"data-x\"), attr(all[i], \"data-w\"));\n"
"  unzoom_btn.setAttribute(\"class\", \"hide\");\n"
"}\n"
"function search(re) {\n"
"  var all = frames.children, spans = [], sum = 0, end = -1;\n"
"  for (var i = 0; i < all.length; i++) {\n"
"    var g = all[i], r = g.children[1];\n"
"    if (!r.hasAttribute(\"data-fill\"))\n"
"      r.setAttribute(\"data-fill\", r.getAttribute(\"fill\"));\n"
"    if (re && re.test(name_of(g))) {\n"
"      r.setAttribute(\"fill\", \"rgb(230,0,230)\");\n"
"      spans.push([attr(g, \"data-x\"), attr(g, \"data-w\")]);\n"
"    } else r.setAttribute(\"fill\", r.getAttribute(\"data-fill\"));\n"
"  }\n"
"  /* Frames above a match lie within it: count each pixel once. */\n"
"  spans.sort(function (a, b) { return a[0] - b[0]; });\n"
"  for (var j = 0; j < spans.length; j++) {\n"
"    var s = spans[j][0], e = s + spans[j][1];\n"
"    if (e <= end) continue;\n"
"    sum += e - Math.max(s, end);\n"
"    end = e;\n"
"  }\n"
"  searching = re;\n"
"  matched.textContent = re ? \"Matched: \" +\n"
"    (100 * sum / (W - 2 * PAD)).toFixed(1) + \"%\" : \"\";\n"
"  search_btn.textContent = re ? \"Reset Search\" : \"Search\";\n"
"  return spans.length;\n"
"}\n"
"function ask() {\n"
"  if (searching) { search(null); return; }\n"
"  var term = prompt(\"Search for (regular expression):\", \"\");\n"
"  if (term) {\n"
"    try { search(new RegExp(term)); }\n"
"    catch (e) { matched.textContent = \"Bad expression: \" + e.message; }\n"
"  }\n"
"}\n"
"function widest(re) {\n"
"  var all = frames.children, best = null;\n"
"  for (var i = 0; i < all.length; i++)\n"
"    if (re.test(name_of(all[i])) &&\n"
"        (!best || attr(all[i], \"data-w\") > attr(best, \"data-w\")))\n"
"      best = all[i];\n"
"  return best;\n"
"}\n"
"function init() {\n"
"  var svg = document.documentElement;\n"
"  W = attr(svg, \"width\");\n"
"  frames = document.getElementById(\"frames\");\n"
"  details = document.getElementById(\"details\");\n"
"  matched = document.getElementById(\"matched\");\n"
"  unzoom_btn = document.getElementById(\"unzoom\");\n"
"  search_btn = document.getElementById(\"search\");\n"
"  var keep = details.textContent;\n"
"  frames.addEventListener(\"mouseover\", function (e) {\n"
"    var g = group_of(e.target);\n"
"    if (g) details.textContent = g.children[0].textContent.replace(\"\\n\", \": \");\n"
"  });\n"
"  frames.addEventListener(\"mouseout\", function () { details.textContent = keep; });\n"
"  frames.addEventListener(\"click\", function (e) {\n"
"    var g = group_of(e.target);\n"
"    if (g) zoom(g);\n"
"  });\n"
"  unzoom_btn.addEventListener(\"click\", reset_zoom);\n"
"  search_btn.addEventListener(\"click\", ask);\n"
"  window.addEventListener(\"keydown\", function (e) {\n"
"    if (e.key === \"f\" && (e.ctrlKey || e.metaKey)) { e.preventDefault(); ask(); }\n"
"    else if (e.key === \"Escape\") { search(null); reset_zoom(); }\n"
"  });\n"
"  var args = decodeURIComponent(location.hash.substring(1)).split(\"&\");\n"
"  for (var i = 0; i < args.length; i++) {\n"
"    var eq = args[i].indexOf(\"=\"), key = args[i].substring(0, eq);\n"
"    var re = eq > 0 ? new RegExp(args[i].substring(eq + 1)) : null;\n"
"    if (key === \"s\" && re) search(re);\n"
"    if (key === \"z\" && re && widest(re)) zoom(widest(re));\n"
"  }\n"
"  svg.setAttribute(\"data-ready\", frames.children.length);\n"
"}\n"
"window.addEventListener(\"load\", init);\n";

static const char style[] =
"text { font-family: Verdana, \"DejaVu Sans\", sans-serif; font-size: "
STR(FONT) "px; fill: #000; }\n"
"#title { font-size: 17px; text-anchor: middle; }\n"
"#subtitle { fill: #444; }\n"
"#unzoom, #search { cursor: pointer; fill: #00a; }\n"
"#frames g { cursor: pointer; }\n"
"#frames text { pointer-events: none; }\n"
"#frames rect:hover { stroke: #000; stroke-width: 0.5; }\n"
".hide { display: none; }\n"
".parent { opacity: 0.5; }\n";

static void put_header(struct writer *w)
{
	const struct exp_flame_node *root = &w->f->nodes[0];
	const char *field = mib_fields[w->o->value].name;
	unsigned width = w->o->width;
	char g1[32], g2[32];

	fprintf(w->out, "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" "
		"width=\"%u\" height=\"%u\" viewBox=\"0 0 %u %u\">\n"
		"<style>\n%s</style>\n"
		"<script type=\"text/ecmascript\"><![CDATA[\n%s]]></script>\n"
		"<rect width=\"100%%\" height=\"100%%\" fill=\"#f8f8f4\"/>\n",
		width, w->height, width, w->height, style, script);
	fprintf(w->out, "<text id=\"title\" x=\"%u\" y=\"24\">", width / 2);
	put_text(w->out, w->o->title ? w->o->title
		 : w->f->has_base ? "Differential heap flame graph"
		 : "Heap flame graph", SIZE_MAX);
	fprintf(w->out, "</text>\n<text id=\"subtitle\" x=\"%d\" y=\"46\">", PAD);
	if (!w->f->has_base) {
		fprintf(w->out, "width: %s (%s %s in all); colour: the contexts' "
			"class, <tspan fill=\"hsl(5,80%%,50%%)\">hot</tspan>, "
			"<tspan fill=\"hsl(38,85%%,45%%)\">notcold</tspan> or "
			"<tspan fill=\"hsl(215,80%%,50%%)\">cold</tspan>",
			field, grouped(root->value[SIDE_TEST], g1), w->unit);
	} else {
		fprintf(w->out, "width: %s of the test profile (%s %s; base %s); "
			"colour: <tspan fill=\"rgb(220,0,0)\">grew</tspan> or "
			"<tspan fill=\"rgb(0,0,220)\">shrank</tspan>, deeper the "
			"larger the relative change", field,
			grouped(root->value[SIDE_TEST], g1), w->unit,
			grouped(root->value[SIDE_BASE], g2));
	}
	fprintf(w->out, "</text>\n"
		"<text id=\"unzoom\" class=\"hide\" x=\"%d\" y=\"24\">Reset Zoom</text>\n"
		"<text id=\"search\" x=\"%u\" y=\"24\" text-anchor=\"end\">Search</text>\n"
		"<text id=\"details\" x=\"%d\" y=\"%u\">",
		PAD, width - PAD, PAD, w->height - 12);
	if (w->o->subtitle)
		put_text(w->out, w->o->subtitle, SIZE_MAX);
	fprintf(w->out, "</text>\n"
		"<text id=\"matched\" x=\"%u\" y=\"%u\" text-anchor=\"end\"></text>\n"
		"<g id=\"frames\">\n", width - PAD, w->height - 12);
}

static const char *unit_of(enum mib_field f)
{
	switch (f) {
	case MIB_TotalSize: return "bytes";
	case MIB_AllocCount: return "allocations";
	case MIB_TotalAccessCount: return "accesses";
	case MIB_TotalLifetime: return "ms of lifetime";
	default: return mib_fields[f].name;
	}
}

enum mp_errcode exp_flame_write_svg(struct exp_flame *f,
				    const struct exp_flame_opts *o, FILE *out,
				    struct mp_err *err)
{
	struct writer w = { .out = out, .f = f, .o = o, .unit = unit_of(o->value) };
	uint64_t total = f->nodes[0].value[SIDE_TEST];
	uint32_t *stack = NULL, depth = 0;
	double *x = NULL;
	size_t sp = 0;

	if (link_children(f))
		return mp_fail(err, MP_E_NOMEM, NULL);
	stack = malloc(f->n * sizeof(*stack));
	x = malloc(f->n * sizeof(*x));
	if (!stack || !x) {
		free(stack);
		free(x);
		return mp_fail(err, MP_E_NOMEM, NULL);
	}
	w.scale = total ? (o->width - 2.0 * PAD) / (double)total : 0;

	/* First pass: how deep the drawn frames go. */
	if (total)
		stack[sp++] = 0;
	while (sp) {
		const struct exp_flame_node *n = &f->nodes[stack[--sp]];

		if ((double)n->value[SIDE_TEST] * w.scale < MIN_W)
			continue;
		depth = n->depth > depth ? n->depth : depth;
		for (uint32_t c = n->first_child; c; c = f->nodes[c].next_sibling)
			stack[sp++] = c;
	}
	w.height = TOP + (depth + 1) * ROW + BOTTOM;
	put_header(&w);

	/* Second pass: preorder, each child right of its elder siblings. */
	if (total) {
		x[0] = PAD;
		stack[sp++] = 0;
	}
	while (sp) {
		uint32_t id = stack[--sp];
		const struct exp_flame_node *n = &f->nodes[id];
		double width = (double)n->value[SIDE_TEST] * w.scale, cx = x[id];
		size_t first = sp;

		if (width < MIN_W)
			continue;
		put_frame(&w, n, x[id], width);
		for (uint32_t c = n->first_child; c; c = f->nodes[c].next_sibling) {
			x[c] = cx;
			cx += (double)f->nodes[c].value[SIDE_TEST] * w.scale;
			stack[sp++] = c;
		}
		/* Pop the first child first: reverse what was pushed. */
		for (size_t a = first, b = sp; a + 1 < b; a++, b--) {
			uint32_t t = stack[a];

			stack[a] = stack[b - 1];
			stack[b - 1] = t;
		}
	}
	fputs("</g>\n</svg>\n", out);
	free(stack);
	free(x);
	if (ferror(out))
		return mp_fail(err, MP_E_IO, "cannot write output: %s",
			       strerror(errno ? errno : EIO));
	return MP_OK;
}
