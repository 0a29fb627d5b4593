/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Placed first on the include path of the layers that must not see
 * capstone (cmake/TracecornLayers.cmake); they ask common/isa instead. */
#error                                                                         \
    "this layer may not use capstone: instruction decoding lives in common/isa (docs/architecture.md)"
