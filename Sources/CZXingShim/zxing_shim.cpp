// See include/CZXingShim.h. Why a shim: zxing-cpp is C++ (classes, std::string, exceptions) and this
// toolchain does not import C++ into Swift, so the one call Capture needs is wrapped in plain C here.
#include "CZXingShim.h"

// text() returns UTF-8 (std::string) instead of the deprecated UTF-16 std::wstring.
#define ZX_USE_UTF8 1
#include <ZXing/ReadBarcode.h>
#include <ZXing/ZXVersion.h>

#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <vector>

namespace {

using ZXing::BarcodeFormat;

// The header's bits must stay the library's bits.
static_assert(CZX_FORMAT_AZTEC == static_cast<uint32_t>(BarcodeFormat::Aztec), "format bits");
static_assert(CZX_FORMAT_CODABAR == static_cast<uint32_t>(BarcodeFormat::Codabar), "format bits");
static_assert(CZX_FORMAT_CODE39 == static_cast<uint32_t>(BarcodeFormat::Code39), "format bits");
static_assert(CZX_FORMAT_CODE93 == static_cast<uint32_t>(BarcodeFormat::Code93), "format bits");
static_assert(CZX_FORMAT_CODE128 == static_cast<uint32_t>(BarcodeFormat::Code128), "format bits");
static_assert(CZX_FORMAT_DATABAR == static_cast<uint32_t>(BarcodeFormat::DataBar), "format bits");
static_assert(CZX_FORMAT_DATABAR_EXPANDED == static_cast<uint32_t>(BarcodeFormat::DataBarExpanded), "format bits");
static_assert(CZX_FORMAT_DATA_MATRIX == static_cast<uint32_t>(BarcodeFormat::DataMatrix), "format bits");
static_assert(CZX_FORMAT_EAN8 == static_cast<uint32_t>(BarcodeFormat::EAN8), "format bits");
static_assert(CZX_FORMAT_EAN13 == static_cast<uint32_t>(BarcodeFormat::EAN13), "format bits");
static_assert(CZX_FORMAT_ITF == static_cast<uint32_t>(BarcodeFormat::ITF), "format bits");
static_assert(CZX_FORMAT_MAXICODE == static_cast<uint32_t>(BarcodeFormat::MaxiCode), "format bits");
static_assert(CZX_FORMAT_PDF417 == static_cast<uint32_t>(BarcodeFormat::PDF417), "format bits");
static_assert(CZX_FORMAT_QR_CODE == static_cast<uint32_t>(BarcodeFormat::QRCode), "format bits");
static_assert(CZX_FORMAT_UPCA == static_cast<uint32_t>(BarcodeFormat::UPCA), "format bits");
static_assert(CZX_FORMAT_UPCE == static_cast<uint32_t>(BarcodeFormat::UPCE), "format bits");
static_assert(CZX_FORMAT_MICRO_QR_CODE == static_cast<uint32_t>(BarcodeFormat::MicroQRCode), "format bits");

void release(czx_result *results, size_t count) {
    if (!results) return;
    for (size_t i = 0; i < count; ++i) {
        std::free(results[i].text);
        std::free(results[i].bytes);
    }
    std::free(results);
}

// Copies one zxing result into C memory; false when an allocation failed.
bool fill(czx_result &out, const ZXing::Result &result, double scale) {
    out.format = static_cast<uint32_t>(result.format());
    const std::string text = result.text();
    out.text = static_cast<char *>(std::malloc(text.size() + 1));
    if (!out.text) return false;
    std::memcpy(out.text, text.c_str(), text.size() + 1);
    const ZXing::ByteArray &bytes = result.bytes();
    out.byte_count = bytes.size();
    if (!bytes.empty()) {
        out.bytes = static_cast<uint8_t *>(std::malloc(bytes.size()));
        if (!out.bytes) return false;
        std::memcpy(out.bytes, bytes.data(), bytes.size());
    }
    const ZXing::Position &position = result.position();
    for (int corner = 0; corner < 4; ++corner) {
        out.corners[2 * corner] = static_cast<float>(position[corner].x * scale);
        out.corners[2 * corner + 1] = static_cast<float>(position[corner].y * scale);
    }
    out.line_count = result.lineCount() > 0 ? result.lineCount() : 1;
    return true;
}

// DataBar is read in calls of its own, one symbol each: zxing-cpp 1.4 compares two DataBar results
// of one image with an assertion that fails (zxing-cpp issue #516), and Debian builds the library
// with assertions on, so that comparison would abort the process.
constexpr uint32_t kDataBar = CZX_FORMAT_DATABAR | CZX_FORMAT_DATABAR_EXPANDED;

struct Found {
    ZXing::Result result;
    double scale; // positions are multiplied by it (2 for a halved layer, 0.5 for a doubled one)
};

// Reads one image; keeps a result unless one of the same format and text was kept before. The
// comparison is done here, not by zxing-cpp (see kDataBar), so it never asserts.
void readLayer(const ZXing::ImageView &image, double scale, uint32_t formats, uint32_t flags, int maxSymbols,
               std::vector<Found> &found) {
    auto read = [&](uint32_t mask, int limit) {
        if (mask == 0) return;
        ZXing::DecodeHints hints;
        hints.setFormats(ZXing::BarcodeFormats(static_cast<BarcodeFormat>(mask)));
        hints.setTryHarder((flags & CZX_FLAG_TRY_HARDER) != 0);
        hints.setTryRotate((flags & CZX_FLAG_TRY_ROTATE) != 0);
        // The pyramid of downscaled layers is built below, where results are merged safely.
        hints.setTryDownscale(false);
        hints.setMaxNumberOfSymbols(static_cast<uint8_t>(limit));
        // Codabar text keeps its start and stop characters (as zbar returns it).
        hints.setReturnCodabarStartEnd(true);
        hints.setReturnErrors(false);
        for (auto &result : ZXing::ReadBarcodes(image, hints)) {
            if (!result.isValid()) continue;
            bool known = false;
            for (const auto &other : found) {
                if (other.result.format() == result.format() && other.result.text() == result.text()) known = true;
            }
            if (!known) found.push_back({std::move(result), scale});
        }
    };
    read(formats & ~kDataBar, maxSymbols);
    read(formats & kDataBar, 1);
}

// Doubles an image (bilinear) into `out`. Target pixel t samples source position t / 2 - 0.25: an
// even t = 2k lies a quarter of the way from k - 1 to k, an odd t = 2k + 1 a quarter from k to k + 1.
void twice(const uint8_t *data, int width, int height, int stride, std::vector<uint8_t> &out) {
    const int w = width * 2, h = height * 2;
    out.assign(static_cast<size_t>(w) * h, 0);
    auto neighbours = [](int t, int size, int &first, int &second, int &firstWeight) {
        const int k = t / 2;
        if (t % 2 == 0) {
            first = k > 0 ? k - 1 : 0;
            second = k;
            firstWeight = 1; // quarters
        } else {
            first = k;
            second = std::min(k + 1, size - 1);
            firstWeight = 3;
        }
    };
    for (int y = 0; y < h; ++y) {
        int y0, y1, wy;
        neighbours(y, height, y0, y1, wy);
        const uint8_t *r0 = data + static_cast<size_t>(y0) * stride, *r1 = data + static_cast<size_t>(y1) * stride;
        for (int x = 0; x < w; ++x) {
            int x0, x1, wx;
            neighbours(x, width, x0, x1, wx);
            const int top = r0[x0] * wx + r0[x1] * (4 - wx), bottom = r1[x0] * wx + r1[x1] * (4 - wx);
            out[static_cast<size_t>(y) * w + x] = static_cast<uint8_t>((top * wy + bottom * (4 - wy) + 8) / 16);
        }
    }
}

// Halves an image (2x2 box filter) into `out`.
void halve(const uint8_t *data, int width, int height, int stride, std::vector<uint8_t> &out) {
    const int w = width / 2, h = height / 2;
    out.assign(static_cast<size_t>(w) * h, 0);
    for (int y = 0; y < h; ++y) {
        const uint8_t *top = data + static_cast<size_t>(2 * y) * stride;
        const uint8_t *bottom = top + stride;
        for (int x = 0; x < w; ++x) {
            out[static_cast<size_t>(y) * w + x] =
                static_cast<uint8_t>((top[2 * x] + top[2 * x + 1] + bottom[2 * x] + bottom[2 * x + 1] + 2) / 4);
        }
    }
}

} // namespace

extern "C" int czx_decode_gray(const uint8_t *data, int width, int height, int stride, uint32_t formats, uint32_t flags,
                               int max_symbols, czx_result **results, size_t *count) {
    if (!data || !results || !count || width <= 0 || height <= 0 || stride < width || max_symbols < 0) {
        return CZX_INVALID_ARGUMENT;
    }
    *results = nullptr;
    *count = 0;
    try {
        const uint32_t any = static_cast<uint32_t>(BarcodeFormat::Any);
        const uint32_t mask = formats == 0 ? any : (formats & any);
        const int limit = max_symbols == 0 || max_symbols > 255 ? 255 : max_symbols;
        std::vector<Found> found;
        readLayer(ZXing::ImageView(data, width, height, ZXing::ImageFormat::Lum, stride), 1, mask, flags, limit, found);
        // Smaller layers find codes whose modules are large or blurred (zxing-cpp's own threshold: 500 px).
        std::vector<uint8_t> layer, next;
        const uint8_t *source = data;
        int w = width, h = height, rowBytes = stride;
        double scale = 1;
        while ((flags & CZX_FLAG_TRY_DOWNSCALE) && std::max(w, h) > 500 && std::min(w, h) >= 4 &&
               static_cast<int>(found.size()) < limit) {
            halve(source, w, h, rowBytes, next);
            layer.swap(next);
            w /= 2;
            h /= 2;
            rowBytes = w;
            scale *= 2;
            source = layer.data();
            readLayer(ZXing::ImageView(source, w, h, ZXing::ImageFormat::Lum, rowBytes), scale, mask, flags, limit, found);
        }
        // Small matrix codes (modules of 3 pixels and less) are found in the image doubled.
        const uint32_t matrix = mask & (CZX_FORMAT_AZTEC | CZX_FORMAT_DATA_MATRIX | CZX_FORMAT_QR_CODE | CZX_FORMAT_MICRO_QR_CODE);
        if ((flags & CZX_FLAG_TRY_UPSCALE) && matrix != 0 && std::max(width, height) <= 1024 &&
            static_cast<int>(found.size()) < limit) {
            std::vector<uint8_t> doubled;
            twice(data, width, height, stride, doubled);
            readLayer(ZXing::ImageView(doubled.data(), 2 * width, 2 * height, ZXing::ImageFormat::Lum, 2 * width), 0.5,
                      matrix, flags & ~CZX_FLAG_TRY_ROTATE, limit, found);
        }
        if (found.empty()) return CZX_OK;
        if (static_cast<int>(found.size()) > limit) found.resize(static_cast<size_t>(limit));
        auto *items = static_cast<czx_result *>(std::calloc(found.size(), sizeof(czx_result)));
        if (!items) return CZX_DECODER_FAILED;
        for (size_t index = 0; index < found.size(); ++index) {
            if (!fill(items[index], found[index].result, found[index].scale)) {
                release(items, found.size());
                return CZX_DECODER_FAILED;
            }
        }
        *results = items;
        *count = found.size();
        return CZX_OK;
    } catch (...) {
        return CZX_DECODER_FAILED;
    }
}

extern "C" void czx_results_free(czx_result *results, size_t count) { release(results, count); }

#define CZX_STRINGIFY2(x) #x
#define CZX_STRINGIFY(x) CZX_STRINGIFY2(x)

extern "C" const char *czx_version(void) {
    return CZX_STRINGIFY(ZXING_VERSION_MAJOR) "." CZX_STRINGIFY(ZXING_VERSION_MINOR) "." CZX_STRINGIFY(ZXING_VERSION_PATCH);
}
