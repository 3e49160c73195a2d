// zxing-cpp 3's own C API (ZXingC.h), built from source by scripts/build-zxing.sh: Swift calls it
// directly, no C++ crosses into Swift.
#ifndef CAPTURE_CZXING_H
#define CAPTURE_CZXING_H
#include <ZXing/ZXingC.h>
#endif
