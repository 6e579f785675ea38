#include "hilsim/xml_escape.h"

void hs_xml_escape(FILE *out, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '<':
            fputs("&lt;", out);
            break;
        case '>':
            fputs("&gt;", out);
            break;
        case '&':
            fputs("&amp;", out);
            break;
        case '"':
            fputs("&quot;", out);
            break;
        case '\'':
            fputs("&apos;", out);
            break;
        default:
            if ((unsigned char)*s >= 0x20 || *s == '\n' || *s == '\t')
                fputc(*s, out);
        }
    }
}
