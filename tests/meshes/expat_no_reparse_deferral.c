/* LD_PRELOAD shim for pvbatch in the ParaView test (paraview_series_test.py).
 *
 * Debian 12's libexpat1 from 2.5.0-1+deb12u2 on carries the fix for CVE-2023-52425, "reparse
 * deferral" (upstream Expat 2.6.0). VTK's XML readers up to 9.2.6 feed Expat the file in chunks and
 * stop it at <AppendedData encoding="raw">; with deferral on, Expat reaches the raw bytes after it
 * and fails ("vtkXMLDataParser: Error parsing XML in stream ... not well-formed (invalid token)"),
 * depending on where the chunks end: some frames read, others come back empty. Debian fixed its
 * own VTK (vtk9 9.1.0+really9.1.0+dfsg2-5+deb12u1, Debian bug 1114938, upstream VTK's fix) but not
 * the VTK 9.2 inside paraview 5.11.0+dfsg-1+b1, so ParaView on an up-to-date Debian 12 fails on any
 * raw appended VTK XML file. This shim makes every parser that XML_ParserCreate makes (VTK's)
 * parse the way it did before, as the fixed VTK does; with an Expat without deferral
 * (XML_SetReparseDeferralEnabled absent) it changes nothing. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>

typedef struct XML_ParserStruct* XML_Parser;
typedef char XML_Char;
typedef unsigned char XML_Bool;

XML_Parser XML_ParserCreate(const XML_Char* encoding) {
  typedef XML_Parser (*create_fn)(const XML_Char*);
  typedef XML_Bool (*deferral_fn)(XML_Parser, XML_Bool);
  create_fn create = (create_fn)dlsym(RTLD_NEXT, "XML_ParserCreate");
  deferral_fn set_deferral = (deferral_fn)dlsym(RTLD_NEXT, "XML_SetReparseDeferralEnabled");
  if (create == NULL) return NULL;
  XML_Parser parser = create(encoding);
  if (parser != NULL && set_deferral != NULL) set_deferral(parser, 0);
  return parser;
}
