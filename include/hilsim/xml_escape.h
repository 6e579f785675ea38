/* XML text and attribute values from any string: the JUnit files, SVG pictures and campaign
 * reports hilsim writes hold names and messages from models, scenarios and users. Not RT. */
#ifndef HILSIM_XML_ESCAPE_H
#define HILSIM_XML_ESCAPE_H

#include <stdio.h>

/* Writes s to out with & < > " ' as entities; control characters other than tab and newline,
 * which XML 1.0 cannot carry at all, are left out. */
void hs_xml_escape(FILE *out, const char *s);

#endif
