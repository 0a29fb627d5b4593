/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Placed first on the include path of the layers below the engine
 * (cmake/TracecornLayers.cmake): they must not see Unicorn. */
#error                                                                         \
    "this layer may not use Unicorn: only emu/engine, loaders, emu/linux, recorder and lib do (docs/architecture.md)"
