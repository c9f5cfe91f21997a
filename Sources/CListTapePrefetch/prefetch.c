// The hints are inline functions in the header; SwiftPM needs a source file per C target.
#include "CListTapePrefetch.h"
