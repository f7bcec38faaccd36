# Sourced by the scripts: run on Mesa's software drivers (lavapipe) unless
# the caller chose a driver.
: "${VK_ICD_FILENAMES:=/usr/share/vulkan/icd.d/lvp_icd.x86_64.json}"
export VK_ICD_FILENAMES
