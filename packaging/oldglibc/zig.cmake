# Toolchain for the glibc 2.28 release build (packaging/oldglibc/build.sh):
# zig's clang for ARCH-linux-gnu.2.28 (wrappers in TPT_OLDGLIBC_BIN) and the
# libraries build.sh built from source in TPT_OLDGLIBC_PREFIX. Nothing is
# taken from the host's /usr (its glibc 2.36 headers and libraries).
foreach(v TPT_OLDGLIBC_PREFIX TPT_OLDGLIBC_BIN)
  if(NOT ${v} AND DEFINED ENV{${v}})
    set(${v} $ENV{${v}})
  endif()
  if(NOT ${v})
    message(FATAL_ERROR "${v} is not set: run packaging/oldglibc/build.sh")
  endif()
endforeach()
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES TPT_OLDGLIBC_PREFIX TPT_OLDGLIBC_BIN)
set(CMAKE_C_COMPILER ${TPT_OLDGLIBC_BIN}/cc)
set(CMAKE_CXX_COMPILER ${TPT_OLDGLIBC_BIN}/c++)
set(CMAKE_AR ${TPT_OLDGLIBC_BIN}/ar CACHE FILEPATH "")
set(CMAKE_RANLIB ${TPT_OLDGLIBC_BIN}/ranlib CACHE FILEPATH "")
set(CMAKE_FIND_ROOT_PATH ${TPT_OLDGLIBC_PREFIX})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
set(Boost_NO_BOOST_CMAKE ON)
set(BOOST_ROOT ${TPT_OLDGLIBC_PREFIX})
set(ENV{PKG_CONFIG_LIBDIR} ${TPT_OLDGLIBC_PREFIX}/lib/pkgconfig)
set(ENV{PKG_CONFIG_PATH} "")
set(ENV{PKG_CONFIG_SYSROOT_DIR} "")
# Boost 1.74's headers predate libc++ dropping std::unary_function (C++17);
# libcxx_compat.h stands in for the libstdc++ extension the code uses.
set(CMAKE_CXX_FLAGS_INIT "-DBOOST_NO_CXX98_FUNCTION_BASE -include ${CMAKE_CURRENT_LIST_DIR}/libcxx_compat.h")
# The .deb's Depends (packaging/CMakeLists.txt) and the wheel's tag.
set(TPT_GLIBC_FLOOR 2.28 CACHE STRING "oldest glibc the binary is built for")
