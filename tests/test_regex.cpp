#include <gtest/gtest.h>

#include "qcheck/regex.hpp"
