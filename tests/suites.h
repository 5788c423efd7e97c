/* suites.h — declarations of every Check suite (see suites.def). */
#ifndef EMQ_TEST_SUITES_H
#define EMQ_TEST_SUITES_H
#include <check.h>
#define SUITE(name, group) Suite *suite_##name(void);
#include "suites.def"
#undef SUITE
#endif
