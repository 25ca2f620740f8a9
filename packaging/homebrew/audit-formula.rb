# audit-formula.rb [--local] FORMULA.rb: Homebrew's audit rules for a formula, the ones that can be
# checked without a Mac and without Homebrew itself (brew audit --strict runs them all on a Mac).
# Prints each problem as "FILE:LINE: problem" and exits 1 if there is any, 0 otherwise.
#   - the file is valid Ruby, and its class is the file's name in CamelCase;
#   - desc: present, at most 80 characters, no leading or trailing space, no article first, a
#     capital first, not the formula's name first, no full stop at the end, "command-line";
#   - homepage and url are https (file:// allowed with --local, a tarball of your own), sha256 is
#     64 hex digits, license is an SPDX identifier, no template slot (@...@) is left;
#   - the components come in Homebrew's order (desc, homepage, url, sha256, license, depends_on,
#     resource, install, post_install, caveats, test), and the dependencies in its order (build
#     ones first, then by name);
#   - there is a test block.
# Written from Homebrew's documented rules (rubocops components_order, dependency_order,
# desc_helper, and the Formula Cookbook); not Homebrew's own code.

# The top-level components this formula may use, in Homebrew's order.
ORDER = %w[desc homepage url mirror version sha256 license revision head livecheck bottle
           keg_only option depends_on uses_from_macos conflicts_with skip_clean fails_with
           resource patch install post_install caveats test].freeze
SPDX = %w[BSD-3-Clause BSD-2-Clause MIT Apache-2.0 GPL-2.0-only GPL-3.0-only LGPL-2.1-only
          MPL-2.0 ISC].freeze

local = ARGV.delete("--local")
path = ARGV.fetch(0) { abort "usage: audit-formula.rb [--local] FORMULA.rb" }
src = File.read(path)
lines = src.lines
problems = []
add = ->(line, msg) { problems << "#{path}:#{line}: #{msg}" }

begin
  RubyVM::InstructionSequence.compile(src, path)
rescue SyntaxError => e
  abort "#{path}: not valid Ruby: #{e.message}"
end

name = File.basename(path, ".rb")
klass = name.split(/[-_]/).map(&:capitalize).join
cls = lines.index { |l| l =~ /^class (\w+) < Formula$/ }
if cls.nil? || lines[cls][/^class (\w+)/, 1] != klass
  add.call((cls || 0) + 1, "the class must be #{klass} < Formula (the file's name)")
end

# The class body's statements: lines indented by exactly two spaces.
stmts = []
lines.each_with_index do |l, i|
  next unless l =~ /^  (def )?([a-z_][a-z0-9_]*[!?]?)(?![a-z0-9_])(.*)$/

  stmts << { line: i + 1, name: Regexp.last_match(2), rest: Regexp.last_match(3) }
end
value = ->(key) { (s = stmts.find { |x| x[:name] == key }) && [s[:line], s[:rest][/^ "([^"]*)"/, 1]] }

line, desc = value.call("desc")
if desc.nil?
  add.call(1, "no desc")
else
  add.call(line, "desc is #{desc.length} characters (at most 80)") if desc.length > 80
  add.call(line, "desc has leading or trailing spaces") if desc != desc.strip
  add.call(line, "desc starts with an article") if desc =~ /^(the|an?)\s/i
  add.call(line, "desc starts with a small letter") if desc =~ /^[a-z]/ && !%w[iOS iPhone macOS].include?(desc.split.first)
  add.call(line, "desc starts with the formula's name") if desc =~ /^#{name.delete('-').chars.join('[\s\-]?')}\b/i
  add.call(line, "desc ends with a full stop") if desc.end_with?(".") && !desc.end_with?("etc.")
  add.call(line, "desc should say command-line") if desc =~ /command ?line/i && desc !~ /command-line/
end
%w[homepage url].each do |key|
  line, v = value.call(key)
  if v.nil?
    add.call(1, "no #{key}")
  elsif !(v.start_with?("https://") || (local && key == "url" && v.start_with?("file://")))
    add.call(line, "#{key} #{v} is not https")
  end
end
line, sum = value.call("sha256")
add.call(line || 1, "sha256 is not 64 hex digits") unless sum =~ /\A\h{64}\z/
line, lic = value.call("license")
add.call(line || 1, "license #{lic.inspect} is not an SPDX identifier") unless SPDX.include?(lic)
lines.each_with_index { |l, i| add.call(i + 1, "template slot left: #{l.strip}") if l =~ /@[A-Z0-9_]+@/ }
add.call(1, "no test block") unless stmts.any? { |s| s[:name] == "test" && s[:rest] =~ /^ do\b/ }

# Components in order (statements that are not components, such as helper methods, are free).
last = nil
stmts.each do |s|
  rank = ORDER.index(s[:name])
  next if rank.nil?

  if last && rank < last[:rank]
    add.call(s[:line], "#{s[:name]} should come before #{last[:name]} (line #{last[:line]})")
  end
  last = { rank: rank, name: s[:name], line: s[:line] } if last.nil? || rank >= last[:rank]
end

# Dependencies: build-time first, then the rest, each group by name.
deps = stmts.select { |s| s[:name] == "depends_on" }.map do |s|
  dep = s[:rest][/^ "([^"]+)"/, 1] || s[:rest][/^ (\w+):/, 1]
  { line: s[:line], key: [s[:rest] =~ /=> :build/ ? 0 : 1, dep.to_s.downcase], dep: dep }
end
deps.each_cons(2) do |a, b|
  add.call(b[:line], "dependency #{b[:dep]} should come before #{a[:dep]}") if (b[:key] <=> a[:key]).negative?
end

puts problems
exit(problems.empty? ? 0 : 1)
