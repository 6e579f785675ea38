/* "Did you mean": the known name closest to a misspelt one, for error messages. Not RT. */
#ifndef HILSIM_CLOSEST_NAME_H
#define HILSIM_CLOSEST_NAME_H

#include <stddef.h>

/* Optimal-string-alignment distance between a and b (insertions, deletions, substitutions and
 * swaps of neighbours cost 1), case-insensitive; names longer than 63 bytes compare as far
 * apart (SIZE_MAX). */
size_t hs_name_distance(const char *a, const char *b);

/* The candidate closest to word, or NULL when none is close enough to be a typo: at most one
 * edit for names up to 4 characters, two up to 8, three beyond. count candidates, each the
 * const char * at byte offset 0 of an element stride bytes apart (a string array: stride
 * sizeof(char *); a table of structs whose first member is the name: sizeof(struct)). */
const char *hs_closest_name(const char *word, const void *candidates, size_t count, size_t stride);

#endif
