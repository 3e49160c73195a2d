// A C face for zxing-cpp 1.4 (a C++ library Swift does not import here): decode a grey image, get
// the codes found with their format, text, bytes and corner points. Only C in this header: the C++
// lives in zxing_shim.cpp, and no C++ exception crosses it.
#ifndef CAPTURE_CZXING_SHIM_H
#define CAPTURE_CZXING_SHIM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Symbology bits, the values of `ZXing::BarcodeFormat` (checked at compile time in the shim).
/// Combine them into the `formats` mask of `czx_decode_gray`.
static const uint32_t CZX_FORMAT_AZTEC = 1u << 0;
static const uint32_t CZX_FORMAT_CODABAR = 1u << 1;
static const uint32_t CZX_FORMAT_CODE39 = 1u << 2;
static const uint32_t CZX_FORMAT_CODE93 = 1u << 3;
static const uint32_t CZX_FORMAT_CODE128 = 1u << 4;
static const uint32_t CZX_FORMAT_DATABAR = 1u << 5;
static const uint32_t CZX_FORMAT_DATABAR_EXPANDED = 1u << 6;
static const uint32_t CZX_FORMAT_DATA_MATRIX = 1u << 7;
static const uint32_t CZX_FORMAT_EAN8 = 1u << 8;
static const uint32_t CZX_FORMAT_EAN13 = 1u << 9;
static const uint32_t CZX_FORMAT_ITF = 1u << 10;
static const uint32_t CZX_FORMAT_MAXICODE = 1u << 11;
static const uint32_t CZX_FORMAT_PDF417 = 1u << 12;
static const uint32_t CZX_FORMAT_QR_CODE = 1u << 13;
static const uint32_t CZX_FORMAT_UPCA = 1u << 14;
static const uint32_t CZX_FORMAT_UPCE = 1u << 15;
static const uint32_t CZX_FORMAT_MICRO_QR_CODE = 1u << 16;

/// Flags of `czx_decode_gray`.
/// Spend more time to find codes (more scan lines, more binarizer passes).
static const uint32_t CZX_FLAG_TRY_HARDER = 1u << 0;
/// Also look for linear codes in the image turned by 90 degrees.
static const uint32_t CZX_FLAG_TRY_ROTATE = 1u << 1;
/// Also look in halved copies of an image larger than 500 pixels (finds codes with large or blurred
/// modules).
static const uint32_t CZX_FLAG_TRY_DOWNSCALE = 1u << 2;

/// Also look for small matrix codes (QR, Micro QR, Aztec, Data Matrix) in the image doubled, when it
/// is at most 1024 pixels on its longer side (zxing-cpp misses modules of 3 pixels and less).
static const uint32_t CZX_FLAG_TRY_UPSCALE = 1u << 3;

/// Status codes of `czx_decode_gray`.
static const int CZX_OK = 0;
/// A null pointer, a non-positive size or a stride smaller than the width.
static const int CZX_INVALID_ARGUMENT = -1;
/// The decoder failed (out of memory or an internal error); nothing was allocated.
static const int CZX_DECODER_FAILED = -2;

/// One code found in an image. Every pointer is owned by the array `czx_decode_gray` returns.
typedef struct czx_result {
    /// One `CZX_FORMAT_*` bit.
    uint32_t format;
    /// The decoded text, UTF-8, NUL-terminated.
    char *text;
    /// The decoded bytes (the content before text conversion); `byte_count` of them.
    uint8_t *bytes;
    size_t byte_count;
    /// Corners in pixels of the decoded image, clockwise from the symbol's own top-left:
    /// x0, y0 (top-left), x1, y1 (top-right), x2, y2 (bottom-right), x3, y3 (bottom-left).
    /// For a linear code read on a single scan line the quadrilateral is flat (top == bottom).
    float corners[8];
    /// How many scan lines agreed on a linear code (1 for matrix codes).
    int32_t line_count;
} czx_result;

/// Decodes an 8-bit grey image (`stride` bytes per row, `stride >= width`). On success, `*results`
/// is a new array of `*count` results (NULL when none) to release with `czx_results_free`.
/// `formats` is a mask of `CZX_FORMAT_*` bits (0: every format); `flags` a mask of `CZX_FLAG_*`;
/// `max_symbols` bounds how many codes are returned (0: 255). At most one DataBar symbol is returned
/// per image (zxing-cpp 1.4 aborts on an assertion when one image yields two, see the shim).
/// The corresponding C++ function is `ZXing::ReadBarcodes`.
int czx_decode_gray(const uint8_t *data, int width, int height, int stride, uint32_t formats, uint32_t flags,
                    int max_symbols, czx_result **results, size_t *count);

/// Releases what `czx_decode_gray` returned (safe on NULL).
void czx_results_free(czx_result *results, size_t count);

/// The zxing-cpp version the shim was built against ("1.4.0").
const char *czx_version(void);

#ifdef __cplusplus
}
#endif

#endif
