/* Writes the repository's CITATION.cff to stdout (`make citation`): the same writer as
 * every report's BibTeX footer and the CITATION.cff beside it (report/docs/citation.c), with no
 * version, since a committed file cannot name the commit that holds it. The test
 * paper/citation_* fails when the committed file is not this program's output. */
#include "citation.h"

int main(void)
{
    citation_write_cff(stdout, "", "");
    return 0;
}
