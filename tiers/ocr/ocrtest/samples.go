package ocrtest

// The texts of the test screenshots: code, and a LeetCode-style problem
// statement in English and in Chinese.
const (
	Code = `func twoSum(nums []int, target int) []int {
    seen := make(map[int]int, len(nums))
    for i, n := range nums {
        if j, ok := seen[target-n]; ok {
            return []int{j, i}
        }
        seen[n] = i
    }
    return nil
}`

	ProblemEN = `1. Two Sum
Given an array of integers nums and an integer target, return the
indices of the two numbers such that they add up to target.
You may assume that each input would have exactly one solution,
and you may not use the same element twice.
Example 1: Input: nums = [2,7,11,15], target = 9 Output: [0,1]
Constraints: 2 <= nums.length <= 10^4`

	ProblemZH = `1. 两数之和
给定一个整数数组 nums 和一个整数目标值 target，
请你在该数组中找出和为目标值的那两个整数，并返回它们的数组下标。
你可以假设每种输入只会对应一个答案，但是数组中同一个元素不能重复出现。
示例 1：输入：nums = [2,7,11,15], target = 9 输出：[0,1]
提示：只会存在一个有效答案`
)

// Sample is one test screenshot with the text it shows and its language.
type Sample struct {
	Name string
	Shot Shot
	Lang string // "en" or "zh"
}

// Scales are the common device pixel ratios of the tests.
var Scales = []float64{1, 1.25, 1.5, 2}

// Samples are every text in both themes at every scale.
func Samples() []Sample {
	var out []Sample
	texts := []struct {
		name, text, font, lang string
		size                   float64
	}{
		{"code", Code, MonoFont, "en", 14},
		{"problem-en", ProblemEN, SansFont, "en", 15},
		{"problem-zh", ProblemZH, CJKFont, "zh", 16},
	}
	for _, tx := range texts {
		for _, th := range []Theme{Light, Dark} {
			for _, sc := range Scales {
				out = append(out, Sample{
					Name: tx.name + "/" + th.Name + "/" + scaleName(sc),
					Shot: Shot{Text: tx.text, Font: tx.font, Size: tx.size, Scale: sc, Theme: th},
					Lang: tx.lang,
				})
			}
		}
	}
	return out
}

func scaleName(s float64) string {
	switch s {
	case 1:
		return "1x"
	case 1.25:
		return "1.25x"
	case 1.5:
		return "1.5x"
	}
	return "2x"
}
