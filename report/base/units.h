/* Numbers as text, the same in every layer: a table's cell and a figure's label
 * that name one number print it alike. Base layer: includes nothing of ours. */
#ifndef ATTNPROF_UNITS_H
#define ATTNPROF_UNITS_H

#include <stddef.h>

/* A time in µs as prose prints it: "93.4 µs", "1.08 ms" (two decimals from 1 ms, one from
 * 10 ms), "–" when not finite. */
void format_us(double us, char *out, size_t n);
/* A time in µs as a table column prints it: "2243 µs" from 100 µs up, "61.9 µs"
 * below, "–" when not finite. Writes at most n bytes into out. */
void units_us_column(double us, char *out, size_t n);
/* The same, by the name the documents use. */
void format_us_column(double us, char *out, size_t n);
/* Characters (columns of a terminal), not bytes, of UTF-8 text: printf pads by bytes. */
size_t units_utf8_columns(const char *s);

/* The decimals a ratio and its interval print with: 2, or up to 4 while the interval's two
 * ends would print alike ([0.98–0.98] beside "ambiguous" reads as a contradiction; at 3
 * decimals it is [0.978–0.982], which straddles the 2% floor's edge 0.980); 2 when the
 * ends are equal (a run against itself: [1.00–1.00]). The ratio prints with the same
 * decimals as its ends. */
int units_ratio_decimals(double lo, double hi);

/* Exponents in running text (S⁰·⁹⁸, R²): the superscript digits ⁰…⁹, the superscript minus,
 * and the middle dot a superscript number uses for its decimal point (Unicode has no
 * superscript full stop). */
extern const char *const units_superscript_digit[10];
#define SUPERSCRIPT_MINUS "\u207b"
#define MIDDLE_DOT "\u00b7"

/* v with `decimals` decimals as an exponent: 0.98 → "⁰·⁹⁸". */
void units_superscript(double v, int decimals, char *out, size_t n);
/* A library version as cuBLAS and cuDNN encode it (major * 10000 + minor * 100 + patch) in
 * the text "9.19.0"; when v is not a version (0 or below: not recorded), `none` instead. */
void units_version_text(int v, const char *none, char *out, size_t n);
/* A noun agreeing with a count: `noun` as is when n is 1, else its last word in the plural
 * ("GEMM" → "GEMMs", "copy" → "copies", "pass" → "passes"). Returns out. */
const char *units_plural(double n, const char *noun, char *out, size_t len);
/* The count and its noun, agreeing: "1 GEMM", "2 GEMMs", "0 kernels", "3 copies", "2250000
 * operations" (a whole count in full, another as %g prints it: "2.5 copies"). Every count+noun phrase of the documents goes through this or
 * units_plural, so "1 GEMMs" cannot be written. Returns out. */
const char *units_count_noun(double n, const char *noun, char *out, size_t len);
/* Two sides' counts and their noun: "3 and 5 steps", "8 and 8 steps", and "1 step each" where
 * "1 and 1 steps" would be written. Returns out. */
const char *units_pair_count(double a, double b, const char *noun, char *out, size_t len);
/* Bytes in binary units: "1.5 GiB", "512 KiB", "12 B" (three significant digits). */
const char *human_bytes(double bytes, char *buf, size_t n);

#endif
