// A C face for zxing-cpp (a C++ library Swift does not import here): decode a grey image, get the
// codes found with their type, text, bytes and corner points. Filled in by the barcode work.
#ifndef CAPTURE_CZXING_SHIM_H
#define CAPTURE_CZXING_SHIM_H
#endif
