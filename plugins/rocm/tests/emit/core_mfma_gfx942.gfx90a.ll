; tilec rocm backend: amdgcn-amd-amdhsa for gfx90a
source_filename = "tilec"
target datalayout = "e-p:64:64-p1:64:64-p2:32:32-p3:32:32-p4:64:64-p5:32:32-p6:32:32-p7:160:256:256:32-p8:128:128-p9:192:256:256:32-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024-v2048:2048-n32:64-S32-A5-G1-ni:7:8:9"
target triple = "amdgcn-amd-amdhsa"

define amdgpu_kernel void @mfma_32x32x8(ptr addrspace(1) %p0, ptr addrspace(1) %p1, ptr addrspace(1) %p2, ptr addrspace(1) %p3) #0 {
entry:
  %tid = call i32 @llvm.amdgcn.workitem.id.x(), !range !{i32 0, i32 64}
  %lane = and i32 %tid, 63
  %wave = lshr i32 %tid, 6
  %bid.x = call i32 @llvm.amdgcn.workgroup.id.x()
  %bid.y = call i32 @llvm.amdgcn.workgroup.id.y()
  %bid.z = call i32 @llvm.amdgcn.workgroup.id.z()
  %r0 = alloca [4 x half], align 16, addrspace(5)
  store [4 x half] zeroinitializer, ptr addrspace(5) %r0, align 16
  %r1 = alloca [4 x half], align 16, addrspace(5)
  store [4 x half] zeroinitializer, ptr addrspace(5) %r1, align 16
  %r2 = alloca [16 x float], align 16, addrspace(5)
  store [16 x float] zeroinitializer, ptr addrspace(5) %r2, align 16
  %r3 = alloca [16 x float], align 16, addrspace(5)
  store [16 x float] zeroinitializer, ptr addrspace(5) %r3, align 16
  %r4 = alloca i32, addrspace(5)
  store i32 0, ptr addrspace(5) %r4
  %r5 = alloca i32, addrspace(5)
  store i32 0, ptr addrspace(5) %r5
  %r6 = alloca i32, addrspace(5)
  store i32 0, ptr addrspace(5) %r6
  %cnt0 = alloca i64, addrspace(5)
  %cnt3 = alloca i64, addrspace(5)
  %cnt6 = alloca i64, addrspace(5)
  %v0 = sdiv i32 %lane, 32
  %v1 = srem i32 %lane, 32
  %v2 = icmp ne i32 %v1, 0
  %v3 = xor i32 %v1, 32
  %v4 = icmp slt i32 %v3, 0
  %v5 = and i1 %v2, %v4
  %v6 = select i1 %v5, i32 32, i32 0
  %v7 = add i32 %v1, %v6
  %v8 = mul i32 %v7, 8
  %v9 = sdiv i32 %lane, 32
  %v10 = srem i32 %lane, 32
  %v11 = icmp ne i32 %v10, 0
  %v12 = xor i32 %v10, 32
  %v13 = icmp slt i32 %v12, 0
  %v14 = and i1 %v11, %v13
  %v15 = zext i1 %v14 to i32
  %v16 = sub i32 %v9, %v15
  %v17 = mul i32 %v16, 4
  %v18 = add i32 %v8, %v17
  %v19 = sext i32 %v18 to i64
  %v20 = getelementptr inbounds half, ptr addrspace(1) %p0, i64 %v19
  %v21 = load <4 x half>, ptr addrspace(1) %v20, align 8
  %v22 = extractelement <4 x half> %v21, i32 0
  %v23 = getelementptr inbounds half, ptr addrspace(5) %r0, i32 0
  store half %v22, ptr addrspace(5) %v23
  %v24 = extractelement <4 x half> %v21, i32 1
  %v25 = getelementptr inbounds half, ptr addrspace(5) %r0, i32 1
  store half %v24, ptr addrspace(5) %v25
  %v26 = extractelement <4 x half> %v21, i32 2
  %v27 = getelementptr inbounds half, ptr addrspace(5) %r0, i32 2
  store half %v26, ptr addrspace(5) %v27
  %v28 = extractelement <4 x half> %v21, i32 3
  %v29 = getelementptr inbounds half, ptr addrspace(5) %r0, i32 3
  store half %v28, ptr addrspace(5) %v29
  %v30 = sext i32 4 to i64
  store i64 0, ptr addrspace(5) %cnt0
  br label %loop0
loop0:
  %v31 = load i64, ptr addrspace(5) %cnt0
  %v32 = icmp slt i64 %v31, %v30
  br i1 %v32, label %body1, label %exit2
body1:
  %v33 = trunc i64 %v31 to i32
  %v34 = mul i32 %v33, 1
  %v35 = add i32 0, %v34
  store i32 %v35, ptr addrspace(5) %r4
  %v36 = sdiv i32 %lane, 32
  %v37 = srem i32 %lane, 32
  %v38 = icmp ne i32 %v37, 0
  %v39 = xor i32 %v37, 32
  %v40 = icmp slt i32 %v39, 0
  %v41 = and i1 %v38, %v40
  %v42 = zext i1 %v41 to i32
  %v43 = sub i32 %v36, %v42
  %v44 = mul i32 %v43, 4
  %v45 = load i32, ptr addrspace(5) %r4
  %v46 = add i32 %v44, %v45
  %v47 = mul i32 %v46, 32
  %v48 = sdiv i32 %lane, 32
  %v49 = srem i32 %lane, 32
  %v50 = icmp ne i32 %v49, 0
  %v51 = xor i32 %v49, 32
  %v52 = icmp slt i32 %v51, 0
  %v53 = and i1 %v50, %v52
  %v54 = select i1 %v53, i32 32, i32 0
  %v55 = add i32 %v49, %v54
  %v56 = add i32 %v47, %v55
  %v57 = sext i32 %v56 to i64
  %v58 = getelementptr inbounds half, ptr addrspace(1) %p1, i64 %v57
  %v59 = load half, ptr addrspace(1) %v58, align 2
  %v60 = load i32, ptr addrspace(5) %r4
  %v61 = getelementptr inbounds half, ptr addrspace(5) %r1, i32 %v60
  store half %v59, ptr addrspace(5) %v61
  %v62 = load i64, ptr addrspace(5) %cnt0
  %v63 = add i64 %v62, 1
  store i64 %v63, ptr addrspace(5) %cnt0
  br label %loop0, !llvm.loop !2
exit2:
  %v64 = sext i32 16 to i64
  store i64 0, ptr addrspace(5) %cnt3
  br label %loop3
loop3:
  %v65 = load i64, ptr addrspace(5) %cnt3
  %v66 = icmp slt i64 %v65, %v64
  br i1 %v66, label %body4, label %exit5
body4:
  %v67 = trunc i64 %v65 to i32
  %v68 = mul i32 %v67, 1
  %v69 = add i32 0, %v68
  store i32 %v69, ptr addrspace(5) %r5
  %v70 = load i32, ptr addrspace(5) %r5
  %v71 = sdiv i32 %v70, 4
  %v72 = srem i32 %v70, 4
  %v73 = icmp ne i32 %v72, 0
  %v74 = xor i32 %v72, 4
  %v75 = icmp slt i32 %v74, 0
  %v76 = and i1 %v73, %v75
  %v77 = zext i1 %v76 to i32
  %v78 = sub i32 %v71, %v77
  %v79 = mul i32 %v78, 8
  %v80 = sdiv i32 %lane, 32
  %v81 = srem i32 %lane, 32
  %v82 = icmp ne i32 %v81, 0
  %v83 = xor i32 %v81, 32
  %v84 = icmp slt i32 %v83, 0
  %v85 = and i1 %v82, %v84
  %v86 = zext i1 %v85 to i32
  %v87 = sub i32 %v80, %v86
  %v88 = mul i32 %v87, 4
  %v89 = add i32 %v79, %v88
  %v90 = load i32, ptr addrspace(5) %r5
  %v91 = sdiv i32 %v90, 4
  %v92 = srem i32 %v90, 4
  %v93 = icmp ne i32 %v92, 0
  %v94 = xor i32 %v92, 4
  %v95 = icmp slt i32 %v94, 0
  %v96 = and i1 %v93, %v95
  %v97 = select i1 %v96, i32 4, i32 0
  %v98 = add i32 %v92, %v97
  %v99 = add i32 %v89, %v98
  %v100 = mul i32 %v99, 32
  %v101 = sdiv i32 %lane, 32
  %v102 = srem i32 %lane, 32
  %v103 = icmp ne i32 %v102, 0
  %v104 = xor i32 %v102, 32
  %v105 = icmp slt i32 %v104, 0
  %v106 = and i1 %v103, %v105
  %v107 = select i1 %v106, i32 32, i32 0
  %v108 = add i32 %v102, %v107
  %v109 = add i32 %v100, %v108
  %v110 = sext i32 %v109 to i64
  %v111 = getelementptr inbounds float, ptr addrspace(1) %p2, i64 %v110
  %v112 = load float, ptr addrspace(1) %v111, align 4
  %v113 = load i32, ptr addrspace(5) %r5
  %v114 = getelementptr inbounds float, ptr addrspace(5) %r2, i32 %v113
  store float %v112, ptr addrspace(5) %v114
  %v115 = load i64, ptr addrspace(5) %cnt3
  %v116 = add i64 %v115, 1
  store i64 %v116, ptr addrspace(5) %cnt3
  br label %loop3, !llvm.loop !4
exit5:
  %v117 = getelementptr inbounds half, ptr addrspace(5) %r0, i32 0
  %v118 = load half, ptr addrspace(5) %v117
  %v119 = insertelement <4 x half> poison, half %v118, i32 0
  %v120 = getelementptr inbounds half, ptr addrspace(5) %r0, i32 1
  %v121 = load half, ptr addrspace(5) %v120
  %v122 = insertelement <4 x half> %v119, half %v121, i32 1
  %v123 = getelementptr inbounds half, ptr addrspace(5) %r0, i32 2
  %v124 = load half, ptr addrspace(5) %v123
  %v125 = insertelement <4 x half> %v122, half %v124, i32 2
  %v126 = getelementptr inbounds half, ptr addrspace(5) %r0, i32 3
  %v127 = load half, ptr addrspace(5) %v126
  %v128 = insertelement <4 x half> %v125, half %v127, i32 3
  %v129 = getelementptr inbounds half, ptr addrspace(5) %r1, i32 0
  %v130 = load half, ptr addrspace(5) %v129
  %v131 = insertelement <4 x half> poison, half %v130, i32 0
  %v132 = getelementptr inbounds half, ptr addrspace(5) %r1, i32 1
  %v133 = load half, ptr addrspace(5) %v132
  %v134 = insertelement <4 x half> %v131, half %v133, i32 1
  %v135 = getelementptr inbounds half, ptr addrspace(5) %r1, i32 2
  %v136 = load half, ptr addrspace(5) %v135
  %v137 = insertelement <4 x half> %v134, half %v136, i32 2
  %v138 = getelementptr inbounds half, ptr addrspace(5) %r1, i32 3
  %v139 = load half, ptr addrspace(5) %v138
  %v140 = insertelement <4 x half> %v137, half %v139, i32 3
  %v141 = getelementptr inbounds float, ptr addrspace(5) %r2, i32 0
  %v142 = load float, ptr addrspace(5) %v141
  %v143 = insertelement <16 x float> poison, float %v142, i32 0
  %v144 = getelementptr inbounds float, ptr addrspace(5) %r2, i32 1
  %v145 = load float, ptr addrspace(5) %v144
  %v146 = insertelement <16 x float> %v143, float %v145, i32 1
  %v147 = getelementptr inbounds float, ptr addrspace(5) %r2, i32 2
  %v148 = load float, ptr addrspace(5) %v147
  %v149 = insertelement <16 x float> %v146, float %v148, i32 2
  %v150 = getelementptr inbounds float, ptr addrspace(5) %r2, i32 3
  %v151 = load float, ptr addrspace(5) %v150
  %v152 = insertelement <16 x float> %v149, float %v151, i32 3
  %v153 = getelementptr inbounds float, ptr addrspace(5) %r2, i32 4
  %v154 = load float, ptr addrspace(5) %v153
  %v155 = insertelement <16 x float> %v152, float %v154, i32 4
  %v156 = getelementptr inbounds float, ptr addrspace(5) %r2, i32 5
  %v157 = load float, ptr addrspace(5) %v156
  %v158 = insertelement <16 x float> %v155, float %v157, i32 5
  %v159 = getelementptr inbounds float, ptr addrspace(5) %r2, i32 6
  %v160 = load float, ptr addrspace(5) %v159
  %v161 = insertelement <16 x float> %v158, float %v160, i32 6
  %v162 = getelementptr inbounds float, ptr addrspace(5) %r2, i32 7
  %v163 = load float, ptr addrspace(5) %v162
  %v164 = insertelement <16 x float> %v161, float %v163, i32 7
  %v165 = getelementptr inbounds float, ptr addrspace(5) %r2, i32 8
  %v166 = load float, ptr addrspace(5) %v165
  %v167 = insertelement <16 x float> %v164, float %v166, i32 8
  %v168 = getelementptr inbounds float, ptr addrspace(5) %r2, i32 9
  %v169 = load float, ptr addrspace(5) %v168
  %v170 = insertelement <16 x float> %v167, float %v169, i32 9
  %v171 = getelementptr inbounds float, ptr addrspace(5) %r2, i32 10
  %v172 = load float, ptr addrspace(5) %v171
  %v173 = insertelement <16 x float> %v170, float %v172, i32 10
  %v174 = getelementptr inbounds float, ptr addrspace(5) %r2, i32 11
  %v175 = load float, ptr addrspace(5) %v174
  %v176 = insertelement <16 x float> %v173, float %v175, i32 11
  %v177 = getelementptr inbounds float, ptr addrspace(5) %r2, i32 12
  %v178 = load float, ptr addrspace(5) %v177
  %v179 = insertelement <16 x float> %v176, float %v178, i32 12
  %v180 = getelementptr inbounds float, ptr addrspace(5) %r2, i32 13
  %v181 = load float, ptr addrspace(5) %v180
  %v182 = insertelement <16 x float> %v179, float %v181, i32 13
  %v183 = getelementptr inbounds float, ptr addrspace(5) %r2, i32 14
  %v184 = load float, ptr addrspace(5) %v183
  %v185 = insertelement <16 x float> %v182, float %v184, i32 14
  %v186 = getelementptr inbounds float, ptr addrspace(5) %r2, i32 15
  %v187 = load float, ptr addrspace(5) %v186
  %v188 = insertelement <16 x float> %v185, float %v187, i32 15
  %v189 = call <16 x float> @llvm.amdgcn.mfma.f32.32x32x8f16(<4 x half> %v128, <4 x half> %v140, <16 x float> %v188, i32 0, i32 0, i32 0)
  %v190 = extractelement <16 x float> %v189, i32 0
  %v191 = getelementptr inbounds float, ptr addrspace(5) %r3, i32 0
  store float %v190, ptr addrspace(5) %v191
  %v192 = extractelement <16 x float> %v189, i32 1
  %v193 = getelementptr inbounds float, ptr addrspace(5) %r3, i32 1
  store float %v192, ptr addrspace(5) %v193
  %v194 = extractelement <16 x float> %v189, i32 2
  %v195 = getelementptr inbounds float, ptr addrspace(5) %r3, i32 2
  store float %v194, ptr addrspace(5) %v195
  %v196 = extractelement <16 x float> %v189, i32 3
  %v197 = getelementptr inbounds float, ptr addrspace(5) %r3, i32 3
  store float %v196, ptr addrspace(5) %v197
  %v198 = extractelement <16 x float> %v189, i32 4
  %v199 = getelementptr inbounds float, ptr addrspace(5) %r3, i32 4
  store float %v198, ptr addrspace(5) %v199
  %v200 = extractelement <16 x float> %v189, i32 5
  %v201 = getelementptr inbounds float, ptr addrspace(5) %r3, i32 5
  store float %v200, ptr addrspace(5) %v201
  %v202 = extractelement <16 x float> %v189, i32 6
  %v203 = getelementptr inbounds float, ptr addrspace(5) %r3, i32 6
  store float %v202, ptr addrspace(5) %v203
  %v204 = extractelement <16 x float> %v189, i32 7
  %v205 = getelementptr inbounds float, ptr addrspace(5) %r3, i32 7
  store float %v204, ptr addrspace(5) %v205
  %v206 = extractelement <16 x float> %v189, i32 8
  %v207 = getelementptr inbounds float, ptr addrspace(5) %r3, i32 8
  store float %v206, ptr addrspace(5) %v207
  %v208 = extractelement <16 x float> %v189, i32 9
  %v209 = getelementptr inbounds float, ptr addrspace(5) %r3, i32 9
  store float %v208, ptr addrspace(5) %v209
  %v210 = extractelement <16 x float> %v189, i32 10
  %v211 = getelementptr inbounds float, ptr addrspace(5) %r3, i32 10
  store float %v210, ptr addrspace(5) %v211
  %v212 = extractelement <16 x float> %v189, i32 11
  %v213 = getelementptr inbounds float, ptr addrspace(5) %r3, i32 11
  store float %v212, ptr addrspace(5) %v213
  %v214 = extractelement <16 x float> %v189, i32 12
  %v215 = getelementptr inbounds float, ptr addrspace(5) %r3, i32 12
  store float %v214, ptr addrspace(5) %v215
  %v216 = extractelement <16 x float> %v189, i32 13
  %v217 = getelementptr inbounds float, ptr addrspace(5) %r3, i32 13
  store float %v216, ptr addrspace(5) %v217
  %v218 = extractelement <16 x float> %v189, i32 14
  %v219 = getelementptr inbounds float, ptr addrspace(5) %r3, i32 14
  store float %v218, ptr addrspace(5) %v219
  %v220 = extractelement <16 x float> %v189, i32 15
  %v221 = getelementptr inbounds float, ptr addrspace(5) %r3, i32 15
  store float %v220, ptr addrspace(5) %v221
  %v222 = sext i32 16 to i64
  store i64 0, ptr addrspace(5) %cnt6
  br label %loop6
loop6:
  %v223 = load i64, ptr addrspace(5) %cnt6
  %v224 = icmp slt i64 %v223, %v222
  br i1 %v224, label %body7, label %exit8
body7:
  %v225 = trunc i64 %v223 to i32
  %v226 = mul i32 %v225, 1
  %v227 = add i32 0, %v226
  store i32 %v227, ptr addrspace(5) %r6
  %v228 = load i32, ptr addrspace(5) %r6
  %v229 = getelementptr inbounds float, ptr addrspace(5) %r3, i32 %v228
  %v230 = load float, ptr addrspace(5) %v229
  %v231 = load i32, ptr addrspace(5) %r6
  %v232 = sdiv i32 %v231, 4
  %v233 = srem i32 %v231, 4
  %v234 = icmp ne i32 %v233, 0
  %v235 = xor i32 %v233, 4
  %v236 = icmp slt i32 %v235, 0
  %v237 = and i1 %v234, %v236
  %v238 = zext i1 %v237 to i32
  %v239 = sub i32 %v232, %v238
  %v240 = mul i32 %v239, 8
  %v241 = sdiv i32 %lane, 32
  %v242 = srem i32 %lane, 32
  %v243 = icmp ne i32 %v242, 0
  %v244 = xor i32 %v242, 32
  %v245 = icmp slt i32 %v244, 0
  %v246 = and i1 %v243, %v245
  %v247 = zext i1 %v246 to i32
  %v248 = sub i32 %v241, %v247
  %v249 = mul i32 %v248, 4
  %v250 = add i32 %v240, %v249
  %v251 = load i32, ptr addrspace(5) %r6
  %v252 = sdiv i32 %v251, 4
  %v253 = srem i32 %v251, 4
  %v254 = icmp ne i32 %v253, 0
  %v255 = xor i32 %v253, 4
  %v256 = icmp slt i32 %v255, 0
  %v257 = and i1 %v254, %v256
  %v258 = select i1 %v257, i32 4, i32 0
  %v259 = add i32 %v253, %v258
  %v260 = add i32 %v250, %v259
  %v261 = mul i32 %v260, 32
  %v262 = sdiv i32 %lane, 32
  %v263 = srem i32 %lane, 32
  %v264 = icmp ne i32 %v263, 0
  %v265 = xor i32 %v263, 32
  %v266 = icmp slt i32 %v265, 0
  %v267 = and i1 %v264, %v266
  %v268 = select i1 %v267, i32 32, i32 0
  %v269 = add i32 %v263, %v268
  %v270 = add i32 %v261, %v269
  %v271 = sext i32 %v270 to i64
  %v272 = getelementptr inbounds float, ptr addrspace(1) %p3, i64 %v271
  store float %v230, ptr addrspace(1) %v272, align 4
  %v273 = load i64, ptr addrspace(5) %cnt6
  %v274 = add i64 %v273, 1
  store i64 %v274, ptr addrspace(5) %cnt6
  br label %loop6, !llvm.loop !6
exit8:
  ret void
}

define amdgpu_kernel void @mfma_32x32x8_wrong_a(ptr addrspace(1) %p0, ptr addrspace(1) %p1, ptr addrspace(1) %p2, ptr addrspace(1) %p3) #1 {
entry:
  %tid = call i32 @llvm.amdgcn.workitem.id.x(), !range !{i32 0, i32 64}
  %lane = and i32 %tid, 63
  %wave = lshr i32 %tid, 6
  %bid.x = call i32 @llvm.amdgcn.workgroup.id.x()
  %bid.y = call i32 @llvm.amdgcn.workgroup.id.y()
  %bid.z = call i32 @llvm.amdgcn.workgroup.id.z()
  %r0 = alloca [4 x half], align 16, addrspace(5)
  store [4 x half] zeroinitializer, ptr addrspace(5) %r0, align 16
  %r1 = alloca [4 x half], align 16, addrspace(5)
  store [4 x half] zeroinitializer, ptr addrspace(5) %r1, align 16
  %r2 = alloca [16 x float], align 16, addrspace(5)
  store [16 x float] zeroinitializer, ptr addrspace(5) %r2, align 16
  %r3 = alloca [16 x float], align 16, addrspace(5)
  store [16 x float] zeroinitializer, ptr addrspace(5) %r3, align 16
  %r4 = alloca i32, addrspace(5)
  store i32 0, ptr addrspace(5) %r4
  %r5 = alloca i32, addrspace(5)
  store i32 0, ptr addrspace(5) %r5
  %r6 = alloca i32, addrspace(5)
  store i32 0, ptr addrspace(5) %r6
  %r7 = alloca i32, addrspace(5)
  store i32 0, ptr addrspace(5) %r7
  %cnt0 = alloca i64, addrspace(5)
  %cnt3 = alloca i64, addrspace(5)
  %cnt6 = alloca i64, addrspace(5)
  %cnt9 = alloca i64, addrspace(5)
  %v0 = sext i32 4 to i64
  store i64 0, ptr addrspace(5) %cnt0
  br label %loop0
loop0:
  %v1 = load i64, ptr addrspace(5) %cnt0
  %v2 = icmp slt i64 %v1, %v0
  br i1 %v2, label %body1, label %exit2
body1:
  %v3 = trunc i64 %v1 to i32
  %v4 = mul i32 %v3, 1
  %v5 = add i32 0, %v4
  store i32 %v5, ptr addrspace(5) %r4
  %v6 = sdiv i32 %lane, 32
  %v7 = srem i32 %lane, 32
  %v8 = icmp ne i32 %v7, 0
  %v9 = xor i32 %v7, 32
  %v10 = icmp slt i32 %v9, 0
  %v11 = and i1 %v8, %v10
  %v12 = select i1 %v11, i32 32, i32 0
  %v13 = add i32 %v7, %v12
  %v14 = mul i32 %v13, 8
  %v15 = sdiv i32 %lane, 32
  %v16 = srem i32 %lane, 32
  %v17 = icmp ne i32 %v16, 0
  %v18 = xor i32 %v16, 32
  %v19 = icmp slt i32 %v18, 0
  %v20 = and i1 %v17, %v19
  %v21 = zext i1 %v20 to i32
  %v22 = sub i32 %v15, %v21
  %v23 = add i32 %v14, %v22
  %v24 = load i32, ptr addrspace(5) %r4
  %v25 = mul i32 2, %v24
  %v26 = add i32 %v23, %v25
  %v27 = sext i32 %v26 to i64
  %v28 = getelementptr inbounds half, ptr addrspace(1) %p0, i64 %v27
  %v29 = load half, ptr addrspace(1) %v28, align 2
  %v30 = load i32, ptr addrspace(5) %r4
  %v31 = getelementptr inbounds half, ptr addrspace(5) %r0, i32 %v30
  store half %v29, ptr addrspace(5) %v31
  %v32 = load i64, ptr addrspace(5) %cnt0
  %v33 = add i64 %v32, 1
  store i64 %v33, ptr addrspace(5) %cnt0
  br label %loop0, !llvm.loop !8
exit2:
  %v34 = sext i32 4 to i64
  store i64 0, ptr addrspace(5) %cnt3
  br label %loop3
loop3:
  %v35 = load i64, ptr addrspace(5) %cnt3
  %v36 = icmp slt i64 %v35, %v34
  br i1 %v36, label %body4, label %exit5
body4:
  %v37 = trunc i64 %v35 to i32
  %v38 = mul i32 %v37, 1
  %v39 = add i32 0, %v38
  store i32 %v39, ptr addrspace(5) %r5
  %v40 = sdiv i32 %lane, 32
  %v41 = srem i32 %lane, 32
  %v42 = icmp ne i32 %v41, 0
  %v43 = xor i32 %v41, 32
  %v44 = icmp slt i32 %v43, 0
  %v45 = and i1 %v42, %v44
  %v46 = zext i1 %v45 to i32
  %v47 = sub i32 %v40, %v46
  %v48 = mul i32 %v47, 4
  %v49 = load i32, ptr addrspace(5) %r5
  %v50 = add i32 %v48, %v49
  %v51 = mul i32 %v50, 32
  %v52 = sdiv i32 %lane, 32
  %v53 = srem i32 %lane, 32
  %v54 = icmp ne i32 %v53, 0
  %v55 = xor i32 %v53, 32
  %v56 = icmp slt i32 %v55, 0
  %v57 = and i1 %v54, %v56
  %v58 = select i1 %v57, i32 32, i32 0
  %v59 = add i32 %v53, %v58
  %v60 = add i32 %v51, %v59
  %v61 = sext i32 %v60 to i64
  %v62 = getelementptr inbounds half, ptr addrspace(1) %p1, i64 %v61
  %v63 = load half, ptr addrspace(1) %v62, align 2
  %v64 = load i32, ptr addrspace(5) %r5
  %v65 = getelementptr inbounds half, ptr addrspace(5) %r1, i32 %v64
  store half %v63, ptr addrspace(5) %v65
  %v66 = load i64, ptr addrspace(5) %cnt3
  %v67 = add i64 %v66, 1
  store i64 %v67, ptr addrspace(5) %cnt3
  br label %loop3, !llvm.loop !10
exit5:
  %v68 = sext i32 16 to i64
  store i64 0, ptr addrspace(5) %cnt6
  br label %loop6
loop6:
  %v69 = load i64, ptr addrspace(5) %cnt6
  %v70 = icmp slt i64 %v69, %v68
  br i1 %v70, label %body7, label %exit8
body7:
  %v71 = trunc i64 %v69 to i32
  %v72 = mul i32 %v71, 1
  %v73 = add i32 0, %v72
  store i32 %v73, ptr addrspace(5) %r6
  %v74 = load i32, ptr addrspace(5) %r6
  %v75 = sdiv i32 %v74, 4
  %v76 = srem i32 %v74, 4
  %v77 = icmp ne i32 %v76, 0
  %v78 = xor i32 %v76, 4
  %v79 = icmp slt i32 %v78, 0
  %v80 = and i1 %v77, %v79
  %v81 = zext i1 %v80 to i32
  %v82 = sub i32 %v75, %v81
  %v83 = mul i32 %v82, 8
  %v84 = sdiv i32 %lane, 32
  %v85 = srem i32 %lane, 32
  %v86 = icmp ne i32 %v85, 0
  %v87 = xor i32 %v85, 32
  %v88 = icmp slt i32 %v87, 0
  %v89 = and i1 %v86, %v88
  %v90 = zext i1 %v89 to i32
  %v91 = sub i32 %v84, %v90
  %v92 = mul i32 %v91, 4
  %v93 = add i32 %v83, %v92
  %v94 = load i32, ptr addrspace(5) %r6
  %v95 = sdiv i32 %v94, 4
  %v96 = srem i32 %v94, 4
  %v97 = icmp ne i32 %v96, 0
  %v98 = xor i32 %v96, 4
  %v99 = icmp slt i32 %v98, 0
  %v100 = and i1 %v97, %v99
  %v101 = select i1 %v100, i32 4, i32 0
  %v102 = add i32 %v96, %v101
  %v103 = add i32 %v93, %v102
  %v104 = mul i32 %v103, 32
  %v105 = sdiv i32 %lane, 32
  %v106 = srem i32 %lane, 32
  %v107 = icmp ne i32 %v106, 0
  %v108 = xor i32 %v106, 32
  %v109 = icmp slt i32 %v108, 0
  %v110 = and i1 %v107, %v109
  %v111 = select i1 %v110, i32 32, i32 0
  %v112 = add i32 %v106, %v111
  %v113 = add i32 %v104, %v112
  %v114 = sext i32 %v113 to i64
  %v115 = getelementptr inbounds float, ptr addrspace(1) %p2, i64 %v114
  %v116 = load float, ptr addrspace(1) %v115, align 4
  %v117 = load i32, ptr addrspace(5) %r6
  %v118 = getelementptr inbounds float, ptr addrspace(5) %r2, i32 %v117
  store float %v116, ptr addrspace(5) %v118
  %v119 = load i64, ptr addrspace(5) %cnt6
  %v120 = add i64 %v119, 1
  store i64 %v120, ptr addrspace(5) %cnt6
  br label %loop6, !llvm.loop !12
exit8:
  %v121 = getelementptr inbounds half, ptr addrspace(5) %r0, i32 0
  %v122 = load half, ptr addrspace(5) %v121
  %v123 = insertelement <4 x half> poison, half %v122, i32 0
  %v124 = getelementptr inbounds half, ptr addrspace(5) %r0, i32 1
  %v125 = load half, ptr addrspace(5) %v124
  %v126 = insertelement <4 x half> %v123, half %v125, i32 1
  %v127 = getelementptr inbounds half, ptr addrspace(5) %r0, i32 2
  %v128 = load half, ptr addrspace(5) %v127
  %v129 = insertelement <4 x half> %v126, half %v128, i32 2
  %v130 = getelementptr inbounds half, ptr addrspace(5) %r0, i32 3
  %v131 = load half, ptr addrspace(5) %v130
  %v132 = insertelement <4 x half> %v129, half %v131, i32 3
  %v133 = getelementptr inbounds half, ptr addrspace(5) %r1, i32 0
  %v134 = load half, ptr addrspace(5) %v133
  %v135 = insertelement <4 x half> poison, half %v134, i32 0
  %v136 = getelementptr inbounds half, ptr addrspace(5) %r1, i32 1
  %v137 = load half, ptr addrspace(5) %v136
  %v138 = insertelement <4 x half> %v135, half %v137, i32 1
  %v139 = getelementptr inbounds half, ptr addrspace(5) %r1, i32 2
  %v140 = load half, ptr addrspace(5) %v139
  %v141 = insertelement <4 x half> %v138, half %v140, i32 2
  %v142 = getelementptr inbounds half, ptr addrspace(5) %r1, i32 3
  %v143 = load half, ptr addrspace(5) %v142
  %v144 = insertelement <4 x half> %v141, half %v143, i32 3
  %v145 = getelementptr inbounds float, ptr addrspace(5) %r2, i32 0
  %v146 = load float, ptr addrspace(5) %v145
  %v147 = insertelement <16 x float> poison, float %v146, i32 0
  %v148 = getelementptr inbounds float, ptr addrspace(5) %r2, i32 1
  %v149 = load float, ptr addrspace(5) %v148
  %v150 = insertelement <16 x float> %v147, float %v149, i32 1
  %v151 = getelementptr inbounds float, ptr addrspace(5) %r2, i32 2
  %v152 = load float, ptr addrspace(5) %v151
  %v153 = insertelement <16 x float> %v150, float %v152, i32 2
  %v154 = getelementptr inbounds float, ptr addrspace(5) %r2, i32 3
  %v155 = load float, ptr addrspace(5) %v154
  %v156 = insertelement <16 x float> %v153, float %v155, i32 3
  %v157 = getelementptr inbounds float, ptr addrspace(5) %r2, i32 4
  %v158 = load float, ptr addrspace(5) %v157
  %v159 = insertelement <16 x float> %v156, float %v158, i32 4
  %v160 = getelementptr inbounds float, ptr addrspace(5) %r2, i32 5
  %v161 = load float, ptr addrspace(5) %v160
  %v162 = insertelement <16 x float> %v159, float %v161, i32 5
  %v163 = getelementptr inbounds float, ptr addrspace(5) %r2, i32 6
  %v164 = load float, ptr addrspace(5) %v163
  %v165 = insertelement <16 x float> %v162, float %v164, i32 6
  %v166 = getelementptr inbounds float, ptr addrspace(5) %r2, i32 7
  %v167 = load float, ptr addrspace(5) %v166
  %v168 = insertelement <16 x float> %v165, float %v167, i32 7
  %v169 = getelementptr inbounds float, ptr addrspace(5) %r2, i32 8
  %v170 = load float, ptr addrspace(5) %v169
  %v171 = insertelement <16 x float> %v168, float %v170, i32 8
  %v172 = getelementptr inbounds float, ptr addrspace(5) %r2, i32 9
  %v173 = load float, ptr addrspace(5) %v172
  %v174 = insertelement <16 x float> %v171, float %v173, i32 9
  %v175 = getelementptr inbounds float, ptr addrspace(5) %r2, i32 10
  %v176 = load float, ptr addrspace(5) %v175
  %v177 = insertelement <16 x float> %v174, float %v176, i32 10
  %v178 = getelementptr inbounds float, ptr addrspace(5) %r2, i32 11
  %v179 = load float, ptr addrspace(5) %v178
  %v180 = insertelement <16 x float> %v177, float %v179, i32 11
  %v181 = getelementptr inbounds float, ptr addrspace(5) %r2, i32 12
  %v182 = load float, ptr addrspace(5) %v181
  %v183 = insertelement <16 x float> %v180, float %v182, i32 12
  %v184 = getelementptr inbounds float, ptr addrspace(5) %r2, i32 13
  %v185 = load float, ptr addrspace(5) %v184
  %v186 = insertelement <16 x float> %v183, float %v185, i32 13
  %v187 = getelementptr inbounds float, ptr addrspace(5) %r2, i32 14
  %v188 = load float, ptr addrspace(5) %v187
  %v189 = insertelement <16 x float> %v186, float %v188, i32 14
  %v190 = getelementptr inbounds float, ptr addrspace(5) %r2, i32 15
  %v191 = load float, ptr addrspace(5) %v190
  %v192 = insertelement <16 x float> %v189, float %v191, i32 15
  %v193 = call <16 x float> @llvm.amdgcn.mfma.f32.32x32x8f16(<4 x half> %v132, <4 x half> %v144, <16 x float> %v192, i32 0, i32 0, i32 0)
  %v194 = extractelement <16 x float> %v193, i32 0
  %v195 = getelementptr inbounds float, ptr addrspace(5) %r3, i32 0
  store float %v194, ptr addrspace(5) %v195
  %v196 = extractelement <16 x float> %v193, i32 1
  %v197 = getelementptr inbounds float, ptr addrspace(5) %r3, i32 1
  store float %v196, ptr addrspace(5) %v197
  %v198 = extractelement <16 x float> %v193, i32 2
  %v199 = getelementptr inbounds float, ptr addrspace(5) %r3, i32 2
  store float %v198, ptr addrspace(5) %v199
  %v200 = extractelement <16 x float> %v193, i32 3
  %v201 = getelementptr inbounds float, ptr addrspace(5) %r3, i32 3
  store float %v200, ptr addrspace(5) %v201
  %v202 = extractelement <16 x float> %v193, i32 4
  %v203 = getelementptr inbounds float, ptr addrspace(5) %r3, i32 4
  store float %v202, ptr addrspace(5) %v203
  %v204 = extractelement <16 x float> %v193, i32 5
  %v205 = getelementptr inbounds float, ptr addrspace(5) %r3, i32 5
  store float %v204, ptr addrspace(5) %v205
  %v206 = extractelement <16 x float> %v193, i32 6
  %v207 = getelementptr inbounds float, ptr addrspace(5) %r3, i32 6
  store float %v206, ptr addrspace(5) %v207
  %v208 = extractelement <16 x float> %v193, i32 7
  %v209 = getelementptr inbounds float, ptr addrspace(5) %r3, i32 7
  store float %v208, ptr addrspace(5) %v209
  %v210 = extractelement <16 x float> %v193, i32 8
  %v211 = getelementptr inbounds float, ptr addrspace(5) %r3, i32 8
  store float %v210, ptr addrspace(5) %v211
  %v212 = extractelement <16 x float> %v193, i32 9
  %v213 = getelementptr inbounds float, ptr addrspace(5) %r3, i32 9
  store float %v212, ptr addrspace(5) %v213
  %v214 = extractelement <16 x float> %v193, i32 10
  %v215 = getelementptr inbounds float, ptr addrspace(5) %r3, i32 10
  store float %v214, ptr addrspace(5) %v215
  %v216 = extractelement <16 x float> %v193, i32 11
  %v217 = getelementptr inbounds float, ptr addrspace(5) %r3, i32 11
  store float %v216, ptr addrspace(5) %v217
  %v218 = extractelement <16 x float> %v193, i32 12
  %v219 = getelementptr inbounds float, ptr addrspace(5) %r3, i32 12
  store float %v218, ptr addrspace(5) %v219
  %v220 = extractelement <16 x float> %v193, i32 13
  %v221 = getelementptr inbounds float, ptr addrspace(5) %r3, i32 13
  store float %v220, ptr addrspace(5) %v221
  %v222 = extractelement <16 x float> %v193, i32 14
  %v223 = getelementptr inbounds float, ptr addrspace(5) %r3, i32 14
  store float %v222, ptr addrspace(5) %v223
  %v224 = extractelement <16 x float> %v193, i32 15
  %v225 = getelementptr inbounds float, ptr addrspace(5) %r3, i32 15
  store float %v224, ptr addrspace(5) %v225
  %v226 = sext i32 16 to i64
  store i64 0, ptr addrspace(5) %cnt9
  br label %loop9
loop9:
  %v227 = load i64, ptr addrspace(5) %cnt9
  %v228 = icmp slt i64 %v227, %v226
  br i1 %v228, label %body10, label %exit11
body10:
  %v229 = trunc i64 %v227 to i32
  %v230 = mul i32 %v229, 1
  %v231 = add i32 0, %v230
  store i32 %v231, ptr addrspace(5) %r7
  %v232 = load i32, ptr addrspace(5) %r7
  %v233 = getelementptr inbounds float, ptr addrspace(5) %r3, i32 %v232
  %v234 = load float, ptr addrspace(5) %v233
  %v235 = load i32, ptr addrspace(5) %r7
  %v236 = sdiv i32 %v235, 4
  %v237 = srem i32 %v235, 4
  %v238 = icmp ne i32 %v237, 0
  %v239 = xor i32 %v237, 4
  %v240 = icmp slt i32 %v239, 0
  %v241 = and i1 %v238, %v240
  %v242 = zext i1 %v241 to i32
  %v243 = sub i32 %v236, %v242
  %v244 = mul i32 %v243, 8
  %v245 = sdiv i32 %lane, 32
  %v246 = srem i32 %lane, 32
  %v247 = icmp ne i32 %v246, 0
  %v248 = xor i32 %v246, 32
  %v249 = icmp slt i32 %v248, 0
  %v250 = and i1 %v247, %v249
  %v251 = zext i1 %v250 to i32
  %v252 = sub i32 %v245, %v251
  %v253 = mul i32 %v252, 4
  %v254 = add i32 %v244, %v253
  %v255 = load i32, ptr addrspace(5) %r7
  %v256 = sdiv i32 %v255, 4
  %v257 = srem i32 %v255, 4
  %v258 = icmp ne i32 %v257, 0
  %v259 = xor i32 %v257, 4
  %v260 = icmp slt i32 %v259, 0
  %v261 = and i1 %v258, %v260
  %v262 = select i1 %v261, i32 4, i32 0
  %v263 = add i32 %v257, %v262
  %v264 = add i32 %v254, %v263
  %v265 = mul i32 %v264, 32
  %v266 = sdiv i32 %lane, 32
  %v267 = srem i32 %lane, 32
  %v268 = icmp ne i32 %v267, 0
  %v269 = xor i32 %v267, 32
  %v270 = icmp slt i32 %v269, 0
  %v271 = and i1 %v268, %v270
  %v272 = select i1 %v271, i32 32, i32 0
  %v273 = add i32 %v267, %v272
  %v274 = add i32 %v265, %v273
  %v275 = sext i32 %v274 to i64
  %v276 = getelementptr inbounds float, ptr addrspace(1) %p3, i64 %v275
  store float %v234, ptr addrspace(1) %v276, align 4
  %v277 = load i64, ptr addrspace(5) %cnt9
  %v278 = add i64 %v277, 1
  store i64 %v278, ptr addrspace(5) %cnt9
  br label %loop9, !llvm.loop !14
exit11:
  ret void
}

define amdgpu_kernel void @mfma_16x16x16(ptr addrspace(1) %p0, ptr addrspace(1) %p1, ptr addrspace(1) %p2, ptr addrspace(1) %p3) #2 {
entry:
  %tid = call i32 @llvm.amdgcn.workitem.id.x(), !range !{i32 0, i32 128}
  %lane = and i32 %tid, 63
  %wave = lshr i32 %tid, 6
  %bid.x = call i32 @llvm.amdgcn.workgroup.id.x()
  %bid.y = call i32 @llvm.amdgcn.workgroup.id.y()
  %bid.z = call i32 @llvm.amdgcn.workgroup.id.z()
  %r0 = alloca [4 x half], align 16, addrspace(5)
  store [4 x half] zeroinitializer, ptr addrspace(5) %r0, align 16
  %r1 = alloca [4 x half], align 16, addrspace(5)
  store [4 x half] zeroinitializer, ptr addrspace(5) %r1, align 16
  %r2 = alloca [4 x float], align 16, addrspace(5)
  store [4 x float] zeroinitializer, ptr addrspace(5) %r2, align 16
  %r3 = alloca [4 x float], align 16, addrspace(5)
  store [4 x float] zeroinitializer, ptr addrspace(5) %r3, align 16
  %r4 = alloca i32, addrspace(5)
  store i32 0, ptr addrspace(5) %r4
  %r5 = alloca i32, addrspace(5)
  store i32 0, ptr addrspace(5) %r5
  %r6 = alloca i32, addrspace(5)
  store i32 0, ptr addrspace(5) %r6
  %cnt0 = alloca i64, addrspace(5)
  %cnt5 = alloca i64, addrspace(5)
  store i32 %wave, ptr addrspace(5) %r4
  %v0 = sdiv i32 %lane, 16
  %v1 = srem i32 %lane, 16
  %v2 = icmp ne i32 %v1, 0
  %v3 = xor i32 %v1, 16
  %v4 = icmp slt i32 %v3, 0
  %v5 = and i1 %v2, %v4
  %v6 = select i1 %v5, i32 16, i32 0
  %v7 = add i32 %v1, %v6
  %v8 = mul i32 %v7, 16
  %v9 = sdiv i32 %lane, 16
  %v10 = srem i32 %lane, 16
  %v11 = icmp ne i32 %v10, 0
  %v12 = xor i32 %v10, 16
  %v13 = icmp slt i32 %v12, 0
  %v14 = and i1 %v11, %v13
  %v15 = zext i1 %v14 to i32
  %v16 = sub i32 %v9, %v15
  %v17 = mul i32 %v16, 4
  %v18 = add i32 %v8, %v17
  %v19 = sext i32 %v18 to i64
  %v20 = getelementptr inbounds half, ptr addrspace(1) %p0, i64 %v19
  %v21 = load <4 x half>, ptr addrspace(1) %v20, align 8
  %v22 = extractelement <4 x half> %v21, i32 0
  %v23 = getelementptr inbounds half, ptr addrspace(5) %r0, i32 0
  store half %v22, ptr addrspace(5) %v23
  %v24 = extractelement <4 x half> %v21, i32 1
  %v25 = getelementptr inbounds half, ptr addrspace(5) %r0, i32 1
  store half %v24, ptr addrspace(5) %v25
  %v26 = extractelement <4 x half> %v21, i32 2
  %v27 = getelementptr inbounds half, ptr addrspace(5) %r0, i32 2
  store half %v26, ptr addrspace(5) %v27
  %v28 = extractelement <4 x half> %v21, i32 3
  %v29 = getelementptr inbounds half, ptr addrspace(5) %r0, i32 3
  store half %v28, ptr addrspace(5) %v29
  %v30 = sext i32 4 to i64
  store i64 0, ptr addrspace(5) %cnt0
  br label %loop0
loop0:
  %v31 = load i64, ptr addrspace(5) %cnt0
  %v32 = icmp slt i64 %v31, %v30
  br i1 %v32, label %body1, label %exit2
body1:
  %v33 = trunc i64 %v31 to i32
  %v34 = mul i32 %v33, 1
  %v35 = add i32 0, %v34
  store i32 %v35, ptr addrspace(5) %r5
  %v36 = sdiv i32 %lane, 16
  %v37 = srem i32 %lane, 16
  %v38 = icmp ne i32 %v37, 0
  %v39 = xor i32 %v37, 16
  %v40 = icmp slt i32 %v39, 0
  %v41 = and i1 %v38, %v40
  %v42 = zext i1 %v41 to i32
  %v43 = sub i32 %v36, %v42
  %v44 = mul i32 %v43, 4
  %v45 = load i32, ptr addrspace(5) %r5
  %v46 = add i32 %v44, %v45
  %v47 = mul i32 %v46, 16
  %v48 = sdiv i32 %lane, 16
  %v49 = srem i32 %lane, 16
  %v50 = icmp ne i32 %v49, 0
  %v51 = xor i32 %v49, 16
  %v52 = icmp slt i32 %v51, 0
  %v53 = and i1 %v50, %v52
  %v54 = select i1 %v53, i32 16, i32 0
  %v55 = add i32 %v49, %v54
  %v56 = add i32 %v47, %v55
  %v57 = sext i32 %v56 to i64
  %v58 = getelementptr inbounds half, ptr addrspace(1) %p1, i64 %v57
  %v59 = load half, ptr addrspace(1) %v58, align 2
  %v60 = load i32, ptr addrspace(5) %r5
  %v61 = getelementptr inbounds half, ptr addrspace(5) %r1, i32 %v60
  store half %v59, ptr addrspace(5) %v61
  %v62 = sdiv i32 %lane, 16
  %v63 = srem i32 %lane, 16
  %v64 = icmp ne i32 %v63, 0
  %v65 = xor i32 %v63, 16
  %v66 = icmp slt i32 %v65, 0
  %v67 = and i1 %v64, %v66
  %v68 = zext i1 %v67 to i32
  %v69 = sub i32 %v62, %v68
  %v70 = mul i32 %v69, 4
  %v71 = load i32, ptr addrspace(5) %r5
  %v72 = add i32 %v70, %v71
  %v73 = mul i32 %v72, 16
  %v74 = sdiv i32 %lane, 16
  %v75 = srem i32 %lane, 16
  %v76 = icmp ne i32 %v75, 0
  %v77 = xor i32 %v75, 16
  %v78 = icmp slt i32 %v77, 0
  %v79 = and i1 %v76, %v78
  %v80 = select i1 %v79, i32 16, i32 0
  %v81 = add i32 %v75, %v80
  %v82 = add i32 %v73, %v81
  %v83 = sext i32 %v82 to i64
  %v84 = getelementptr inbounds float, ptr addrspace(1) %p2, i64 %v83
  %v85 = load float, ptr addrspace(1) %v84, align 4
  %v86 = load i32, ptr addrspace(5) %r5
  %v87 = getelementptr inbounds float, ptr addrspace(5) %r2, i32 %v86
  store float %v85, ptr addrspace(5) %v87
  %v88 = load i64, ptr addrspace(5) %cnt0
  %v89 = add i64 %v88, 1
  store i64 %v89, ptr addrspace(5) %cnt0
  br label %loop0, !llvm.loop !16
exit2:
  %v90 = getelementptr inbounds half, ptr addrspace(5) %r0, i32 0
  %v91 = load half, ptr addrspace(5) %v90
  %v92 = insertelement <4 x half> poison, half %v91, i32 0
  %v93 = getelementptr inbounds half, ptr addrspace(5) %r0, i32 1
  %v94 = load half, ptr addrspace(5) %v93
  %v95 = insertelement <4 x half> %v92, half %v94, i32 1
  %v96 = getelementptr inbounds half, ptr addrspace(5) %r0, i32 2
  %v97 = load half, ptr addrspace(5) %v96
  %v98 = insertelement <4 x half> %v95, half %v97, i32 2
  %v99 = getelementptr inbounds half, ptr addrspace(5) %r0, i32 3
  %v100 = load half, ptr addrspace(5) %v99
  %v101 = insertelement <4 x half> %v98, half %v100, i32 3
  %v102 = getelementptr inbounds half, ptr addrspace(5) %r1, i32 0
  %v103 = load half, ptr addrspace(5) %v102
  %v104 = insertelement <4 x half> poison, half %v103, i32 0
  %v105 = getelementptr inbounds half, ptr addrspace(5) %r1, i32 1
  %v106 = load half, ptr addrspace(5) %v105
  %v107 = insertelement <4 x half> %v104, half %v106, i32 1
  %v108 = getelementptr inbounds half, ptr addrspace(5) %r1, i32 2
  %v109 = load half, ptr addrspace(5) %v108
  %v110 = insertelement <4 x half> %v107, half %v109, i32 2
  %v111 = getelementptr inbounds half, ptr addrspace(5) %r1, i32 3
  %v112 = load half, ptr addrspace(5) %v111
  %v113 = insertelement <4 x half> %v110, half %v112, i32 3
  %v114 = getelementptr inbounds float, ptr addrspace(5) %r2, i32 0
  %v115 = load float, ptr addrspace(5) %v114
  %v116 = insertelement <4 x float> poison, float %v115, i32 0
  %v117 = getelementptr inbounds float, ptr addrspace(5) %r2, i32 1
  %v118 = load float, ptr addrspace(5) %v117
  %v119 = insertelement <4 x float> %v116, float %v118, i32 1
  %v120 = getelementptr inbounds float, ptr addrspace(5) %r2, i32 2
  %v121 = load float, ptr addrspace(5) %v120
  %v122 = insertelement <4 x float> %v119, float %v121, i32 2
  %v123 = getelementptr inbounds float, ptr addrspace(5) %r2, i32 3
  %v124 = load float, ptr addrspace(5) %v123
  %v125 = insertelement <4 x float> %v122, float %v124, i32 3
  %v126 = call <4 x float> @llvm.amdgcn.mfma.f32.16x16x16f16(<4 x half> %v101, <4 x half> %v113, <4 x float> %v125, i32 0, i32 0, i32 0)
  %v127 = extractelement <4 x float> %v126, i32 0
  %v128 = getelementptr inbounds float, ptr addrspace(5) %r3, i32 0
  store float %v127, ptr addrspace(5) %v128
  %v129 = extractelement <4 x float> %v126, i32 1
  %v130 = getelementptr inbounds float, ptr addrspace(5) %r3, i32 1
  store float %v129, ptr addrspace(5) %v130
  %v131 = extractelement <4 x float> %v126, i32 2
  %v132 = getelementptr inbounds float, ptr addrspace(5) %r3, i32 2
  store float %v131, ptr addrspace(5) %v132
  %v133 = extractelement <4 x float> %v126, i32 3
  %v134 = getelementptr inbounds float, ptr addrspace(5) %r3, i32 3
  store float %v133, ptr addrspace(5) %v134
  %v135 = load i32, ptr addrspace(5) %r4
  %v136 = icmp eq i32 %v135, 1
  br i1 %v136, label %then3, label %endif4
then3:
  %v137 = sext i32 4 to i64
  store i64 0, ptr addrspace(5) %cnt5
  br label %loop5
loop5:
  %v138 = load i64, ptr addrspace(5) %cnt5
  %v139 = icmp slt i64 %v138, %v137
  br i1 %v139, label %body6, label %exit7
body6:
  %v140 = trunc i64 %v138 to i32
  %v141 = mul i32 %v140, 1
  %v142 = add i32 0, %v141
  store i32 %v142, ptr addrspace(5) %r6
  %v143 = load i32, ptr addrspace(5) %r6
  %v144 = getelementptr inbounds float, ptr addrspace(5) %r3, i32 %v143
  %v145 = load float, ptr addrspace(5) %v144
  %v146 = sdiv i32 %lane, 16
  %v147 = srem i32 %lane, 16
  %v148 = icmp ne i32 %v147, 0
  %v149 = xor i32 %v147, 16
  %v150 = icmp slt i32 %v149, 0
  %v151 = and i1 %v148, %v150
  %v152 = zext i1 %v151 to i32
  %v153 = sub i32 %v146, %v152
  %v154 = mul i32 %v153, 4
  %v155 = load i32, ptr addrspace(5) %r6
  %v156 = add i32 %v154, %v155
  %v157 = mul i32 %v156, 16
  %v158 = sdiv i32 %lane, 16
  %v159 = srem i32 %lane, 16
  %v160 = icmp ne i32 %v159, 0
  %v161 = xor i32 %v159, 16
  %v162 = icmp slt i32 %v161, 0
  %v163 = and i1 %v160, %v162
  %v164 = select i1 %v163, i32 16, i32 0
  %v165 = add i32 %v159, %v164
  %v166 = add i32 %v157, %v165
  %v167 = sext i32 %v166 to i64
  %v168 = getelementptr inbounds float, ptr addrspace(1) %p3, i64 %v167
  store float %v145, ptr addrspace(1) %v168, align 4
  %v169 = load i64, ptr addrspace(5) %cnt5
  %v170 = add i64 %v169, 1
  store i64 %v170, ptr addrspace(5) %cnt5
  br label %loop5, !llvm.loop !18
exit7:
  br label %endif4
endif4:
  ret void
}

declare <4 x float> @llvm.amdgcn.mfma.f32.16x16x16f16(<4 x half>, <4 x half>, <4 x float>, i32 immarg, i32 immarg, i32 immarg)
declare <16 x float> @llvm.amdgcn.mfma.f32.32x32x8f16(<4 x half>, <4 x half>, <16 x float>, i32 immarg, i32 immarg, i32 immarg)
declare i32 @llvm.amdgcn.workgroup.id.x()
declare i32 @llvm.amdgcn.workgroup.id.y()
declare i32 @llvm.amdgcn.workgroup.id.z()
declare i32 @llvm.amdgcn.workitem.id.x()

attributes #0 = { "amdgpu-flat-work-group-size"="64,64" "uniform-work-group-size"="true" "target-cpu"="gfx90a" "denormal-fp-math"="ieee,ieee" "denormal-fp-math-f32"="ieee,ieee" }
attributes #1 = { "amdgpu-flat-work-group-size"="64,64" "uniform-work-group-size"="true" "target-cpu"="gfx90a" "denormal-fp-math"="ieee,ieee" "denormal-fp-math-f32"="ieee,ieee" }
attributes #2 = { "amdgpu-flat-work-group-size"="128,128" "uniform-work-group-size"="true" "target-cpu"="gfx90a" "denormal-fp-math"="ieee,ieee" "denormal-fp-math-f32"="ieee,ieee" }

!llvm.module.flags = !{!0}
!0 = !{i32 1, !"amdhsa_code_object_version", i32 500}
!1 = !{!"llvm.loop.unroll.full"}
!2 = distinct !{!2, !1}
!3 = !{!"llvm.loop.unroll.full"}
!4 = distinct !{!4, !3}
!5 = !{!"llvm.loop.unroll.full"}
!6 = distinct !{!6, !5}
!7 = !{!"llvm.loop.unroll.full"}
!8 = distinct !{!8, !7}
!9 = !{!"llvm.loop.unroll.full"}
!10 = distinct !{!10, !9}
!11 = !{!"llvm.loop.unroll.full"}
!12 = distinct !{!12, !11}
!13 = !{!"llvm.loop.unroll.full"}
!14 = distinct !{!14, !13}
!15 = !{!"llvm.loop.unroll.full"}
!16 = distinct !{!16, !15}
!17 = !{!"llvm.loop.unroll.full"}
!18 = distinct !{!18, !17}
