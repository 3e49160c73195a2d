// See include/CZXingShim.h.
#include "CZXingShim.h"
